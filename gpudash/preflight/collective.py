"""torch.distributed for the preflight: a process group on the training backend, over the preflight's store.

Besides every rank's group, the bus bandwidth is measured within each node (a group of the node's ranks; the
nodes measure at once, as they would in training) and across nodes (a group of each node's lowest rank).
torch.distributed.new_group must be called by every rank for every group in the same order, so each rank builds
them all from the same list of nodes. One node: its sweep is the world's; one rank per node: the world's sweep
is the across-node one.

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
    return {"backend": backend, "device": where, "ok": False, "error": error, "ms": 0.0, "busbw": [],
            "node_busbw": [], "across_busbw": None}  # fmt: skip


def _split(dist, rank: int, where: str, sizes: list[int], nodes: list[list[int]], timeout_s: float,
           out: dict[str, Any]) -> None:  # fmt: skip
    """The within-node and across-node sweeps into `out` (node_busbw, across_busbw): `nodes` lists the ranks of
    each node, each list sorted, the lists in the order of their lowest rank (the same on every rank)."""
    from gpudash.preflight.bandwidth import bus_bandwidth

    mine = next(n for n in nodes if rank in n)
    leaders = [n[0] for n in nodes]
    if len(nodes) == 1:  # every rank on one node: the world's sweep is the node's
        out["node_busbw"] = out["busbw"]
        return
    if all(len(n) == 1 for n in nodes):  # one rank per node: the world's sweep is the across-node one
        out["across_busbw"] = out["busbw"] if rank in leaders else None
        return
    timeout = timedelta(seconds=timeout_s)
    within = {n[0]: dist.new_group(n, timeout=timeout) for n in nodes if len(n) >= 2}  # same order on every rank
    across = dist.new_group(leaders, timeout=timeout)
    if len(mine) >= 2:
        out["node_busbw"] = bus_bandwidth(dist, len(mine), where, sizes, group=within[mine[0]])
    if rank in leaders:
        out["across_busbw"] = bus_bandwidth(dist, len(leaders), where, sizes, group=across)


def run_collectives(
    world: World, raw_store, backend: str, device: dict[str, Any] | None, timeout_s: float, sizes: list[int],
    deadline_s: float, nodes: list[list[int]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Join the group, check one all_reduce's sum, measure bus bandwidth over `sizes` over every rank, then
    within each of `nodes` and across them (_split); within `deadline_s`."""
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
        out["node_busbw"], out["across_busbw"] = [], None
        if out["ok"] and sizes and nodes:
            try:
                _split(dist, world.rank, where, sizes, nodes, timeout_s, out)
            except Exception as exc:
                out.update(ok=False, error=f"within-node or across-node group: {first_line(exc)}")
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
