"""torch.distributed for the preflight: a process group on the training backend, over the preflight's store.

The group exists only for the collectives (gathering results and the verdict go through the store: see
store.py). Its timeout bounds every collective; the whole phase also runs in a thread that this rank stops
waiting for at a deadline, since a collective on a stopped peer can hold a thread in C++ past any timeout.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from gpudash.preflight.launcher import World
from gpudash.preflight.store import first_line


def backend_for(device: dict[str, Any] | None, wanted: str) -> str:
    import torch
    import torch.distributed as dist

    if wanted != "auto":
        return wanted
    gpu = device is not None and device["key"].split(":")[0] in ("nvidia", "amd")
    return "nccl" if gpu and torch.cuda.is_available() and dist.is_nccl_available() else "gloo"


def _where(backend: str, device: dict[str, Any] | None) -> str:
    return f"cuda:{device['torch_index']}" if backend == "nccl" and device else "cpu"


def _failed(backend: str, where: str, error: str) -> dict[str, Any]:
    return {"backend": backend, "device": where, "ok": False, "error": error, "ms": 0.0, "busbw": []}


def run_collectives(
    world: World, raw_store, backend: str, device: dict[str, Any] | None, timeout_s: float, sizes: list[int],
    deadline_s: float,
) -> dict[str, Any]:  # fmt: skip
    """Join the group, check one all_reduce's sum, measure bus bandwidth over `sizes`; within `deadline_s`."""
    box: dict[str, Any] = {}
    where = _where(backend, device)

    def phase() -> None:
        import torch.distributed as dist

        try:
            spec = "cpu:gloo,cuda:nccl" if backend == "nccl" else backend
            dist.init_process_group(
                spec,
                store=dist.PrefixStore("pg/", raw_store),
                rank=world.rank,
                world_size=world.world_size,
                timeout=timedelta(seconds=timeout_s),
            )
        except Exception as exc:
            box["out"] = _failed(backend, where, f"cannot form the {backend} group: {first_line(exc)}")
            return
        from gpudash.preflight.bandwidth import all_reduce_check, bus_bandwidth

        out = all_reduce_check(dist, world.world_size, backend, where)
        out["busbw"] = bus_bandwidth(dist, world.world_size, where, sizes) if out["ok"] and sizes else []
        box["out"] = out
        try:
            dist.destroy_process_group()
        except Exception:
            pass

    thread = threading.Thread(target=phase, name="preflight-collectives", daemon=True)
    thread.start()
    thread.join(deadline_s)
    if thread.is_alive():
        return _failed(backend, where, f"collectives did not finish within {deadline_s:g} s (a peer stopped?)")
    return box.get("out") or _failed(backend, where, "collectives ended without a result")
