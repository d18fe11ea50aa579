"""Memory bandwidth (runs in the child): an on-device copy, and host to device where there is a device.

The copy counts bytes read plus bytes written (the STREAM "copy" convention), so its GB/s compares with a
memory datasheet figure. Host to device copies from pinned host memory, as a training data loader does with
pin_memory=True, and counts the bytes moved once.
"""

from __future__ import annotations

from collections.abc import Callable

from gpudash.measure.bench.tasks.clocks import OverBudget, clock_for, measure
from gpudash.measure.bench.tasks.matmul import error_text


def _result(op: str, nbytes: int, moved: int, timing) -> dict:
    stats = timing.summary()
    return {"op": op, "status": "ok", "bytes": nbytes, "gbps": moved / stats["median_s"] / 1e9, **stats}


def run(
    device: str, nbytes: int, measure_s: float, case_budget_s: float, progress: Callable[..., None] | None = None
) -> dict:
    import torch

    progress = progress or (lambda **info: None)
    cases: list[dict] = []
    out = {"device": device, "torch": torch.__version__, "cases": cases}
    if device != "cpu":
        torch.cuda.set_device(torch.device(device))
    clock = clock_for(torch, device)
    progress(op="copy", done=0, total=2)
    cases.append(_copy(torch, device, nbytes, clock, measure_s, case_budget_s))
    progress(op="host_to_device", done=1, total=2)
    if device == "cpu":
        cases.append(
            {
                "op": "host_to_device",
                "status": "not_run",
                "reason": "the CPU is the host: there is no separate device memory",
            }
        )
    else:
        cases.append(_host_to_device(torch, device, nbytes, clock, measure_s, case_budget_s))
    progress(op=None, done=2, total=2)
    return out


def _copy(torch, device, nbytes, clock, measure_s, case_budget_s) -> dict:
    def prepare():
        src = torch.ones(nbytes, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src).fill_(2)  # touched now, so the timed copies do not pay for page faults
        return lambda: dst.copy_(src)

    return _case("copy", nbytes, 2 * nbytes, prepare, clock, measure_s, case_budget_s)


def _host_to_device(torch, device, nbytes, clock, measure_s, case_budget_s) -> dict:
    def prepare():
        host = torch.ones(nbytes, dtype=torch.uint8).pin_memory()
        dst = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(2)
        return lambda: dst.copy_(host, non_blocking=True)

    return _case("host_to_device", nbytes, nbytes, prepare, clock, measure_s, case_budget_s)


def _case(
    op: str, nbytes: int, moved: int, prepare: Callable[[], Callable[[], object]], clock, measure_s, case_budget_s
) -> dict:
    """Time the copy `prepare()` returns; `moved` bytes count toward GB/s. Failures become the case's status."""
    try:
        timing = measure(prepare(), clock, measure_s=measure_s, case_budget_s=case_budget_s)
        return _result(op, nbytes, moved, timing)
    except OverBudget as exc:
        return {
            "op": op,
            "status": "over_budget",
            "bytes": nbytes,
            "call_s": exc.call_s,
            "reason": f"one copy took {exc.call_s:.3g} s, over the {case_budget_s:g} s case budget",
        }
    except Exception as exc:
        return {"op": op, "status": "error", "bytes": nbytes, "reason": error_text(exc)}
