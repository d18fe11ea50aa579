"""Matmul throughput of one precision on one device over a sweep of shapes (runs in the child).

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

from gpudash.measure.bench.tasks.clocks import OverBudget, clock_for, measure
from gpudash.measure.bench.tasks.operands import NotRunnable, check_alignment, dtype_names, make_matmul, set_fp32_mode

RETRY_LOAD = 0.25  # other processes took over a quarter of the CPU while a case was timed

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
    """Measure each shape; returns {"precision", "device", "cases": [...], "stopped", "failure_reason", ...}.

    sweep_budget_s: no new shape starts once the sweep has run this long (the quick mode's time cap)."""
    import torch

    dtypes = dtypes or {}
    progress = progress or (lambda **info: None)
    out: dict = {
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
    ordered: list[Shape] = sorted(((m, n, k) for m, n, k in shapes), key=_flops)
    rate = 0.0  # best FLOP/s seen so far
    began = time.monotonic()
    try:
        if device != "cpu":
            torch.cuda.set_device(torch.device(device))
        if precision in ("fp32", "tf32"):
            out["fp32_mode"] = set_fp32_mode(torch, device, precision)
        out["dtypes"] = dtype_names(torch, precision, dtypes)
        clock = clock_for(torch, device)
    except NotRunnable as exc:
        out["failure_reason"] = str(exc)
        return out
    except Exception as exc:  # torch refused the precision outright (an unsupported dtype, an old GPU)
        out["failure_reason"] = error_text(exc)
        return out

    for i, shape in enumerate(ordered):
        progress(precision=precision, shape=list(shape), done=i, total=len(ordered))
        case: dict[str, Any] = {"shape": list(shape)}
        out["cases"].append(case)
        out["stopped"] = out["stopped"] or _stop_before(shape, i == 0, began, rate, case_budget_s, sweep_budget_s)
        if out["stopped"]:
            case.update(status="skipped", reason=out["stopped"])
            continue
        problem = check_alignment(precision, device, *shape)
        if problem:
            case.update(status="skipped", reason=problem)
            continue
        call = None
        try:
            call = make_matmul(torch, precision, device, *shape, dtypes)
            may_retry = sweep_budget_s is None or time.monotonic() - began < sweep_budget_s
            timing = _timed(call, clock, measure_s, case_budget_s, may_retry, case)
        except OverBudget as exc:
            gflops = _flops(shape) / exc.call_s / 1e9
            out["stopped"] = (
                f"slow path: one {_label(shape)} call took {exc.call_s:.3g} s ({gflops:.3g} GFLOPS), "
                f"over the {case_budget_s:g} s case budget; larger shapes skipped"
            )
            case.update(status="over_budget", call_s=exc.call_s, reason=out["stopped"])
            continue
        except Exception as exc:
            reason = error_text(exc)
            if _is_oom(torch, exc):
                out["stopped"] = reason = f"out of memory at {_label(shape)}; larger shapes skipped"
            elif not any(c.get("status") == "ok" for c in out["cases"]):
                out["failure_reason"] = reason  # fails at the smallest shape: the precision does not run
                out["stopped"] = f"failed: {reason}"
            case.update(status="error", reason=reason)
            continue
        finally:
            del call  # free this shape's tensors before the next, larger one
            if device != "cpu":
                torch.cuda.empty_cache()
        stats = timing.summary()
        # Predict the next shape from the fastest call: a slow path is slow every time, contention is not.
        rate = max(rate, _flops(shape) / stats["min_s"])
        case.update(
            status="ok", gflops=_flops(shape) / stats["median_s"] / 1e9, first_call_s=timing.first_call_s, **stats
        )
    progress(precision=precision, shape=None, done=len(ordered), total=len(ordered))
    return out


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


def _timed(call, clock, measure_s: float, case_budget_s: float, may_retry: bool, case: dict):
    timing = measure(call, clock, measure_s=measure_s, case_budget_s=case_budget_s)
    if may_retry and (timing.other_load or 0.0) > RETRY_LOAD:  # once; keep the less disturbed measurement
        again = measure(call, clock, measure_s=measure_s, case_budget_s=case_budget_s)
        timing = min(timing, again, key=lambda t: t.other_load or 0.0)
        case["retried"] = True
    return timing
