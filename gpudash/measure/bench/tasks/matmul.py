"""Matmul throughput of the asked precisions on one device over a sweep of shapes (runs in the child).

The precisions are measured together, shape by shape, their timed calls interleaved in rounds (clocks.
measure_rounds), so load that comes and goes hits every precision alike and their ratio holds; rounds that saw
contention are left out of the figures, and a shape that never got enough quiet rounds is marked contended.
Shapes run from the smallest amount of work to the largest, so the first one is cheap even on a slow
path. If one call takes longer than the case budget, it is recorded and every larger shape is skipped.
Before each later shape the time of one call is predicted from the best rate seen so far (the fastest
call: a slow path is slow every time, a busy machine is not); a shape whose call would not fit twice in the
case budget (a warm-up and one timed call) is skipped with every larger one. Either way a slow path (a
reference kernel, an emulated dtype) is recorded with its reason and never stalls the sweep.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gpudash.measure.bench.tasks.clocks import OverBudget, clock_for, measure_rounds, warm_up
from gpudash.measure.bench.tasks.contention import OtherLoad, gpu_watch
from gpudash.measure.bench.tasks.operands import NotRunnable, check_alignment, dtype_names, make_matmul, set_fp32_mode

Shape = tuple[int, int, int]  # M, N, K


def _flops(shape: Shape) -> float:
    m, n, k = shape
    return 2.0 * m * n * k


def _label(shape: Shape) -> str:
    return "x".join(str(d) for d in shape)


def error_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:300]


def _is_oom(torch, exc: BaseException) -> bool:
    oom = getattr(torch, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc).lower()


def sweep(
    device: str,
    precision: str,
    shapes: list[list[int]],
    measure_s: float,
    case_budget_s: float,
    dtypes: dict[str, str | None] | None = None,
    sweep_budget_s: float | None = None,
    progress: Callable[..., None] | None = None,
) -> dict:
    """One precision's sweep: {"precision", "device", "cases": [...], "stopped", "failure_reason", ...}."""
    out = interleaved(device, [precision], shapes, measure_s, case_budget_s, dtypes, sweep_budget_s, progress)
    return out["sweeps"][precision]


def interleaved(
    device: str,
    precisions: list[str],
    shapes: list[list[int]],
    measure_s: float,
    case_budget_s: float,
    dtypes: dict[str, str | None] | None = None,
    sweep_budget_s: float | None = None,
    progress: Callable[..., None] | None = None,
) -> dict:
    """Measure each shape in every precision, timed in alternation; returns {"torch", "threads", "watch",
    "sweeps": {precision: {"cases": [...], "stopped", "failure_reason", ...}}}.

    case_budget_s bounds one precision's time on one shape; sweep_budget_s (the quick mode's cap) one
    precision's share of the sweep: no new shape starts once the sweep has run that long per precision."""
    import torch

    dtypes = dtypes or {}
    progress = progress or (lambda **info: None)
    ordered: list[Shape] = sorted(((m, n, k) for m, n, k in shapes), key=_flops)
    sweeps = {p: _new_sweep(torch, device, p) for p in precisions}
    rate = dict.fromkeys(precisions, 0.0)  # best FLOP/s seen so far, per precision
    clock = None
    try:
        if device != "cpu":
            torch.cuda.set_device(torch.device(device))
        clock = clock_for(torch, device)
    except Exception as exc:  # no usable device: every precision fails alike
        for out in sweeps.values():
            out["failure_reason"] = error_text(exc)
    live = [p for p in precisions if clock is not None and _prepare(torch, device, p, sweeps[p], dtypes)]
    watch = OtherLoad() if device == "cpu" else gpu_watch(torch, device)
    began = time.monotonic()
    total = len(ordered) * len(precisions)
    for i, shape in enumerate(ordered):
        progress(precision=",".join(live) or None, shape=list(shape), done=i * len(precisions), total=total)
        ready: dict[str, tuple[Any, Any]] = {}
        cases: dict[str, dict] = {}
        for p in live:
            out = sweeps[p]
            case: dict[str, Any] = {"shape": list(shape)}
            out["cases"].append(case)
            cap = sweep_budget_s * len(live) if sweep_budget_s is not None else None
            out["stopped"] = out["stopped"] or _stop_before(shape, i == 0, began, rate[p], case_budget_s, cap)
            if out["stopped"]:
                case.update(status="skipped", reason=out["stopped"])
                continue
            problem = check_alignment(p, device, *shape)
            if problem:
                case.update(status="skipped", reason=problem)
                continue
            shared = {"fp32", "tf32"} <= set(live) and p in ("fp32", "tf32")
            ready_call = _warmed(torch, p, device, shape, dtypes, clock, measure_s, case_budget_s, out, case, shared)
            if ready_call is not None:
                ready[p], cases[p] = ready_call, case
        if ready:
            may_retry = sweep_budget_s is None or time.monotonic() - began < sweep_budget_s * len(live)
            timings = measure_rounds(
                ready, clock, measure_s=measure_s, case_budget_s=case_budget_s, watch=watch, retry=may_retry
            )
            for p, timing in timings.items():
                stats = timing.summary()
                # Predict the next shape from the fastest call: a slow path is slow every time, contention is not.
                rate[p] = max(rate[p], _flops(shape) / stats["min_s"])
                cases[p].update(
                    status="ok",
                    gflops=_flops(shape) / stats["median_s"] / 1e9,
                    first_call_s=timing.first_call_s,
                    **stats,
                )
        ready.clear()  # free this shape's tensors before the next, larger one
        if device != "cpu":
            torch.cuda.empty_cache()
    progress(precision=None, shape=None, done=total, total=total)
    return {
        "torch": torch.__version__,
        "threads": torch.get_num_threads() if device == "cpu" else None,
        "watch": "cpu" if device == "cpu" else ("nvml" if watch is not None else None),
        "sweeps": sweeps,
    }


def _new_sweep(torch, device: str, precision: str) -> dict:
    return {
        "op": "matmul",
        "precision": precision,
        "device": device,
        "torch": torch.__version__,
        "threads": torch.get_num_threads() if device == "cpu" else None,
        "cases": [],
        "stopped": None,
        "failure_reason": None,
        "dtypes": None,
    }


def _prepare(torch, device: str, precision: str, out: dict, dtypes: dict) -> bool:
    """Set the precision's fp32 mode and name its dtypes; False (with the reason) when torch refuses it."""
    try:
        if precision in ("fp32", "tf32"):
            out["fp32_mode"] = set_fp32_mode(torch, device, precision)
        out["dtypes"] = dtype_names(torch, precision, dtypes)
        return True
    except NotRunnable as exc:
        out["failure_reason"] = str(exc)
    except Exception as exc:  # torch refused the precision outright (an unsupported dtype, an old GPU)
        out["failure_reason"] = error_text(exc)
    return False


def _warmed(
    torch, precision: str, device: str, shape: Shape, dtypes, clock, measure_s, case_budget_s, out, case, shared_mode
):
    """(call, Warm) for one precision at one shape, or None with the case (and the sweep) told why not.
    shared_mode: fp32 and tf32 are both measured, so each call sets torch's global fp32 matmul mode first."""
    try:
        if precision in ("fp32", "tf32"):
            set_fp32_mode(torch, device, precision)
        call = make_matmul(torch, precision, device, *shape, dtypes)
        if shared_mode:
            call = _in_mode(torch, device, precision, call)
        return call, warm_up(call, clock, measure_s=measure_s, case_budget_s=case_budget_s)
    except OverBudget as exc:
        gflops = _flops(shape) / exc.call_s / 1e9
        out["stopped"] = (
            f"slow path: one {_label(shape)} call took {exc.call_s:.3g} s ({gflops:.3g} GFLOPS), "
            f"over the {case_budget_s:g} s case budget; larger shapes skipped"
        )
        case.update(status="over_budget", call_s=exc.call_s, reason=out["stopped"])
    except Exception as exc:
        reason = error_text(exc)
        if _is_oom(torch, exc):
            out["stopped"] = reason = f"out of memory at {_label(shape)}; larger shapes skipped"
        elif not any(c.get("status") == "ok" for c in out["cases"]):
            out["failure_reason"] = reason  # fails at the smallest shape: the precision does not run
            out["stopped"] = f"failed: {reason}"
        case.update(status="error", reason=reason)
    return None


def _in_mode(torch, device: str, precision: str, call):
    """A call that sets its fp32 matmul mode first (fp32 and tf32 share torch's global setting)."""

    def run():
        set_fp32_mode(torch, device, precision)
        return call()

    return run


def _stop_before(
    shape: Shape, first: bool, began: float, rate: float, case_budget_s: float, sweep_budget_s: float | None
) -> str | None:
    """Why this shape and every larger one are skipped, or None to measure it."""
    if sweep_budget_s is not None and not first and time.monotonic() - began > sweep_budget_s:
        return (
            f"time cap: this precision's share of the sweep ({sweep_budget_s:g} s) is used up; "
            "this and larger shapes skipped (the full sweep has no cap)"
        )
    predicted = _flops(shape) / rate if rate else 0.0  # nothing is predicted for the first (smallest) shape
    if 2 * predicted > case_budget_s:  # a warm-up and one timed call must fit
        return (
            f"slow path: a {_label(shape)} call would take about {predicted:.3g} s ({rate / 1e9:.3g} GFLOPS), "
            f"too long for the {case_budget_s:g} s case budget; this and larger shapes skipped"
        )
    return None
