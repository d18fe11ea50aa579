"""Judging one probe task: its checks (or its crash, hang or cancel) as a PrecisionTestResult with a verdict.

verified        every check matched its reference within the dtype's tolerance
slow_reference  correct, but the matmul ran below SLOW_REFERENCE_FRACTION of fp32's rate, timed in the
                same task in alternation with fp32 at the same shape: a reference path, not hardware
failed          a check gave wrong numbers or raised, or the probe crashed or hung (the reason says which)
not_run         not tried: a replayed machine, a device torch cannot see, a dtype this torch lacks
"""

from __future__ import annotations

import math
from typing import Any

from gpudash.knowledge import ABSENT
from gpudash.measure import runner
from gpudash.measure.schema import FAILED, NOT_RUN, SLOW_REFERENCE, VERIFIED, PrecisionTestResult
from gpudash.models import json_safe

# A reduced precision whose matmul runs below this fraction of fp32's rate is a slow reference path.
SLOW_REFERENCE_FRACTION = 0.10
# fp64 is slower than fp32 by design (1/2 to 1/64 on GPUs), and fp32 is the yardstick itself.
RATE_EXEMPT = ("fp64", "fp32", "tf32")


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def _headline(checks: list[dict]) -> dict:
    """The check whose error is the precision's headline: the matmul (or the TF32 effect)."""
    for name in ("matmul", "tf32_effect"):
        for check in checks:
            if check.get("check") == name:
                return check
    return {}


def slow_reference_note(precision: str, matmul: dict) -> str | None:
    """The slow-reference finding for a correct matmul, or None when the rate is fine or unknown."""
    ratio = matmul.get("rate_vs_fp32")
    if precision in RATE_EXEMPT or not isinstance(ratio, (int, float)) or ratio >= SLOW_REFERENCE_FRACTION:
        return None
    shape = "x".join(str(n) for n in matmul.get("timing_shape") or [])
    return (
        f"runs only as a slow reference path: {matmul.get('gflops', 0):.3g} GFLOPS, {ratio:.1%} of fp32's "
        f"{matmul.get('fp32_gflops', 0):.3g} GFLOPS at {shape}, timed alternately in the same probe "
        f"(threshold {SLOW_REFERENCE_FRACTION:.0%})"
    )


def absent_reason(precision: str) -> str:
    return (
        f"no {precision} on this device: the spec tables list it as absent, and torch refused the matmul "
        "(its error is in the details)"
    )


def judge(
    precision: str, spec: str | None, torch_claim: bool | None, task: runner.TaskResult, torch_basis: str | None = None
) -> PrecisionTestResult:
    """One task's outcome as a PrecisionTestResult with its verdict."""

    def result(verdict: str, verified: bool | None, reason: str | None, **extra) -> PrecisionTestResult:
        return PrecisionTestResult(
            precision=precision,
            supported=verified is True,
            failure_reason=reason,
            spec=spec,
            torch=torch_claim,
            verified=verified,
            verdict=verdict,
            **extra,
        )

    details: dict[str, Any] = {"seconds": round(task.duration_s, 3)}
    if torch_basis:
        details["torch_basis"] = torch_basis
    if task.status == runner.TIMEOUT:
        return result(FAILED, False, f"probe hung: {task.error}; the child process was killed", details=details)
    if task.status == runner.CRASHED:
        tail = task.output_tail.strip().splitlines()
        details["output_tail"] = tail[-5:]
        return result(FAILED, False, f"probe crashed: {task.error}", details=details)
    if task.status == runner.ERROR:
        return result(FAILED, False, f"probe raised {task.error}", details=details)
    if task.status == runner.CANCELLED:
        return result(NOT_RUN, None, "not run: cancelled", details=details)
    raw = task.value if isinstance(task.value, dict) else {}
    claim = raw.get("torch") or {}
    if "value" in claim:
        torch_claim = claim["value"]
        details["torch_basis"] = claim.get("basis")
    details.update({k: raw[k] for k in ("torch_version", "fp8_dtypes") if raw.get(k)})
    if raw.get("not_run"):
        return result(NOT_RUN, None, f"not run: {raw['not_run']}", details=details)
    checks = json_safe(raw.get("checks") or [])
    details["checks"] = checks
    head = _headline(checks)
    errors = {"max_rel_error": _finite(head.get("max_rel_error")), "max_abs_error": _finite(head.get("max_abs_error"))}
    for key in ("gflops", "fp32_gflops", "rate_vs_fp32", "rate_range", "rate_basis", "timing_shape"):
        if key in head:
            details[key] = head[key]
    if head.get("note"):
        details["note"] = head["note"]
    failing = [c for c in checks if not c.get("ok")]
    if not checks:
        return result(FAILED, False, "probe returned no checks", details=details)
    if failing:
        reason = failing[0].get("reason") or f"{failing[0].get('check')} failed"
        if len(failing) > 1:
            details["other_failures"] = [c.get("reason") for c in failing[1:]]
        if spec == ABSENT and failing[0].get("raised"):
            # torch's refusal (fp4 on a CPU: "ValueError: Invalid scaling configuration ...") is what the spec
            # predicts, not a finding: say what the tables say, and keep torch's words as evidence.
            details["error"] = reason
            reason = absent_reason(precision)
        return result(FAILED, False, reason, details=details, **errors)
    note = slow_reference_note(precision, head)
    if note:
        details["note"] = note
        return result(SLOW_REFERENCE, True, None, details=details, **errors)
    return result(VERIFIED, True, None, details=details, **errors)


def not_run(precision: str, spec: str | None, torch_claim: bool | None, reason: str) -> PrecisionTestResult:
    return PrecisionTestResult(
        precision=precision,
        supported=False,
        failure_reason=reason,
        spec=spec,
        torch=torch_claim,
        verified=None,
        verdict=NOT_RUN,
    )
