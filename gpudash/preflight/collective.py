"""torch.distributed for the preflight: join the ranks, test the training backend, gather at rank 0.

The process group uses gloo for the gathered results (plain Python objects, pickled: the ranks of one job
trust each other) and, when this rank trains on a GPU and NCCL (RCCL on ROCm) is there, NCCL for an
all_reduce on the device: the collective training will use. Every call is bounded by the group's timeout.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from gpudash.errors import GpudashError
from gpudash.preflight.launcher import World


class GatherFailed(GpudashError):
    """The ranks could not join or exchange results: the command could not do its job (exit code 3)."""


def backend_for(device: dict[str, Any] | None, wanted: str) -> str:
    import torch
    import torch.distributed as dist

    if wanted != "auto":
        return wanted
    gpu = device is not None and device["key"].split(":")[0] in ("nvidia", "amd")
    return "nccl" if gpu and torch.cuda.is_available() and dist.is_nccl_available() else "gloo"


class Group:
    def __init__(self, world: World, backend: str, timeout_s: float) -> None:
        import torch.distributed as dist

        self.world, self.backend = world, backend
        self.dist = dist
        spec = "cpu:gloo,cuda:nccl" if backend == "nccl" else backend
        try:
            dist.init_process_group(
                spec,
                init_method=f"tcp://{world.master_addr}:{world.master_port}",
                rank=world.rank,
                world_size=world.world_size,
                timeout=timedelta(seconds=timeout_s),
            )
            self.objects = dist.new_group(backend="gloo") if backend == "nccl" else None
        except Exception as exc:
            raise GatherFailed(
                f"rank {world.rank}: cannot join the other ranks at {world.master_addr}:{world.master_port} "
                f"({backend}): {exc}".splitlines()[0]
            ) from None

    def all_reduce_check(self, device: dict[str, Any] | None) -> dict[str, Any]:
        """A sum over every rank on this rank's device, with the training backend; must equal world size."""
        import torch

        where = f"cuda:{device['torch_index']}" if self.backend == "nccl" and device else "cpu"
        started = time.perf_counter()
        try:
            if where != "cpu":
                torch.cuda.set_device(where)
            ones = torch.ones(1024, device=where)
            self.dist.all_reduce(ones.clone())  # waits for the slowest rank; the timed one below does not
            if where != "cpu":
                torch.cuda.synchronize()
            started = time.perf_counter()
            self.dist.all_reduce(ones)
            total = float(ones[0].item())  # .item() waits for the device
            ok = total == self.world.world_size
            error = None if ok else f"sum {total:g}, expected {self.world.world_size}"
        except Exception as exc:
            ok, error = False, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {"backend": self.backend, "device": where, "ok": ok, "error": error,
                "ms": round((time.perf_counter() - started) * 1000, 2)}  # fmt: skip

    def gather(self, result: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Every rank's result at rank 0 (None on the others)."""
        out: list[Any] | None = [None] * self.world.world_size if self.world.rank == 0 else None
        try:
            self.dist.gather_object(result, out, dst=0, group=self.objects)
        except Exception as exc:
            raise GatherFailed(f"rank {self.world.rank}: gathering the results failed: {exc}".splitlines()[0]) from None
        return out

    def share(self, value: Any) -> Any:
        """Rank 0's `value` on every rank (the exit code, so that every rank exits alike)."""
        box = [value]
        try:
            self.dist.broadcast_object_list(box, src=0, group=self.objects)
        except Exception as exc:
            raise GatherFailed(
                f"rank {self.world.rank}: receiving rank 0's verdict failed: {exc}".splitlines()[0]
            ) from None
        return box[0]

    def close(self) -> None:
        try:
            self.dist.destroy_process_group()
        except Exception:
            pass
