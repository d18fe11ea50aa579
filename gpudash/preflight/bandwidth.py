"""all_reduce on the job's own backend: one sum checked, then bus bandwidth over a sweep of sizes.

Bus bandwidth is computed the way nccl-tests computes it for all_reduce (doc/PERFORMANCE.md there):
algbw = bytes / time, busbw = algbw x 2(n-1)/n, so a figure compares with nccl-tests' and with the published
floors (knowledge/busbw.py) whatever the number of ranks. Every rank runs the same number of calls per size
(the count depends on the size alone), or the group would hang on the rank that called once more.

On CPU tensors (gloo) each size's timed calls also record the host's CPU counters (cpu): the verdict tells
from them whether programs outside the job shared the cores meanwhile (host_load.py), which the ranks of one
host cannot tell alone, being each other's load.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from gpudash.measure.bench.tasks.contention import cpu_counters, cpu_delta
from gpudash.preflight.store import first_line

BYTES_PER_SWEEP = 256 * 2**20  # calls per size: about this many bytes, between 2 and 20 calls


def calls_for(size: int) -> int:
    return max(2, min(20, BYTES_PER_SWEEP // max(size, 1)))


def bus_factor(n: int) -> float:
    return 2.0 * (n - 1) / n if n > 1 else 0.0


def _sync(torch, where: str) -> None:
    if where != "cpu":
        torch.cuda.synchronize()


def all_reduce_check(dist, n: int, backend: str, where: str) -> dict[str, Any]:
    """A sum over every rank on this rank's device; must equal the world size."""
    import torch

    started = time.perf_counter()
    try:
        if where != "cpu":
            torch.cuda.set_device(where)
        ones = torch.ones(1024, device=where)
        dist.all_reduce(ones.clone())  # waits for the slowest rank; the timed one below does not
        _sync(torch, where)
        started = time.perf_counter()
        dist.all_reduce(ones)
        total = float(ones[0].item())  # .item() waits for the device
        ok = total == n
        error = None if ok else f"sum {total:g}, expected {n}"
    except Exception as exc:
        ok, error = False, first_line(exc)
    return {"backend": backend, "device": where, "ok": ok, "error": error,
            "ms": round((time.perf_counter() - started) * 1000, 2)}  # fmt: skip


def bus_bandwidth(dist, n: int, where: str, sizes: list[int], group=None) -> list[dict[str, Any]]:
    """[{bytes, calls, seconds, algbw_gbs, busbw_gbs}] for each size in bytes (fp32 elements), over `group` (of
    n ranks; None: every rank). Only the group's ranks call this."""
    reduce = dist.all_reduce if group is None else partial(dist.all_reduce, group=group)
    import torch

    out: list[dict[str, Any]] = []
    for size in sizes:
        try:
            data = torch.ones(max(size // 4, 1), dtype=torch.float32, device=where)
            reduce(data)  # warm-up, and every rank starts the timed calls together
            _sync(torch, where)
            calls = calls_for(size)
            counted = cpu_counters() if where == "cpu" else None
            began = time.perf_counter()
            for _ in range(calls):
                reduce(data)
            _sync(torch, where)
            seconds = (time.perf_counter() - began) / calls
            cpu = cpu_delta(counted, cpu_counters()) if counted else None
            algbw = data.numel() * 4 / seconds / 1e9
            out.append({"bytes": data.numel() * 4, "calls": calls, "seconds": seconds,
                        "algbw_gbs": algbw, "busbw_gbs": algbw * bus_factor(n), "cpu": cpu, "error": None})  # fmt: skip
            del data
        except Exception as exc:
            out.append({"bytes": size, "calls": 0, "seconds": None, "algbw_gbs": None, "busbw_gbs": None,
                        "cpu": None, "error": first_line(exc)})  # fmt: skip
            break  # a group that failed once is not trusted for the next size
    return out
