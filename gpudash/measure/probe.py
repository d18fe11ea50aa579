"""Precision probes, parent side: run every precision on every device in a child process, judge the
results, and sum each device up as a PrecisionCapabilityMatrix.

Three answers per precision: `spec` (the architecture tables), `torch` (what PyTorch claims) and
`verified` (what happened when gpudash ran it). The child-side checks live in `probe_tasks`; this module
never imports torch. Verdicts:
  verified        every check matched its reference within the dtype's tolerance
  slow_reference  correct, but the matmul ran below SLOW_REFERENCE_FRACTION of fp32's rate, timed in the
                  same task in alternation with fp32 at the same shape: a reference path, not hardware
  failed          a check gave wrong numbers or raised, or the probe crashed or hung (the reason says which)
  not_run         not tried: a replayed machine, a device torch cannot see, a dtype this torch lacks
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable, Iterable

from gpudash import store
from gpudash.devices import Machine
from gpudash.errors import UsageError
from gpudash.knowledge import arch_for, peaks_for
from gpudash.measure import runner
from gpudash.measure.schema import (FAILED, NOT_RUN, SLOW_REFERENCE, VERIFIED, PrecisionCapabilityMatrix,
                                    PrecisionTestResult)
from gpudash.models import DeviceInfo
from gpudash.precisions import PRECISIONS

PROBE_VERSION = 1
STORE_KIND = "probe"
# The child-side entry point. Tests point this at a wrapper that plants faults; nothing else changes it.
TASK_TARGET = "gpudash.measure.probe_tasks.entry:run_probe"
# A reduced precision whose matmul runs below this fraction of fp32's rate is a slow reference path.
SLOW_REFERENCE_FRACTION = 0.10
# fp64 is slower than fp32 by design (1/2 to 1/64 on GPUs), and fp32 is the yardstick itself.
RATE_EXEMPT = ("fp64", "fp32", "tf32")
REPLAYED_REASON = "not run: replayed"

ProgressFn = Callable[[dict[str, Any]], None]


# Devices --------------------------------------------------------------------------------------------

def torch_device(device: DeviceInfo) -> str | None:
    """The torch device string for a gpudash device ("cpu", "cuda:N"), or None when torch cannot see it."""
    if device.vendor == "cpu":
        return "cpu"
    if device.torch_index is not None:
        return f"cuda:{device.torch_index}"  # ROCm builds call AMD GPUs cuda:N too
    return None


def fp8_flavours(device: DeviceInfo) -> dict[str, str]:
    """The fp8 dtypes to probe with: the architecture's own (fnuz on gfx942), else the OCP pair."""
    arch = arch_for(device)
    return {"e4m3": arch.fp8_dtype or "float8_e4m3fn", "e5m2": arch.fp8_e5m2_dtype or "float8_e5m2"}


def find_device(machine: Machine, wanted: str) -> DeviceInfo:
    """A device by key ("nvidia:1", "cpu:0"), "cpu", torch name ("cuda:0"), or bare index N (GPU N, or
    device N on a machine without GPUs)."""
    text = str(wanted).strip().lower()
    by_key = {d.key: d for d in machine.devices}
    if text in by_key:
        return by_key[text]
    gpus = [d for d in machine.devices if d.vendor != "cpu"]
    if text == "cpu":
        match = [d for d in machine.devices if d.vendor == "cpu"]
    elif text.startswith("cuda:") and text[5:].isdigit():
        number = int(text[5:])
        match = [d for d in gpus if d.torch_index == number]
        if not any(d.torch_index is not None for d in gpus):  # torch's numbering unknown (a replay): by index
            match = [d for d in gpus if d.index == number]
    elif text.isdigit():
        match = [d for d in (gpus or machine.devices) if d.index == int(text)]
    else:
        match = []
    if not match:
        known = ", ".join(by_key) or "none"
        raise UsageError(f"--device {wanted!r}: no such device (this machine has: {known})")
    return match[0]


# Verdicts -------------------------------------------------------------------------------------------

def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def json_safe(value: Any) -> Any:
    """Non-finite floats (an all-NaN output's error) become None, so every output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


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
    return (f"runs only as a slow reference path: {matmul.get('gflops', 0):.3g} GFLOPS, {ratio:.1%} of fp32's "
            f"{matmul.get('fp32_gflops', 0):.3g} GFLOPS at {shape}, timed alternately in the same probe "
            f"(threshold {SLOW_REFERENCE_FRACTION:.0%})")


def judge(precision: str, spec: str | None, torch_claim: bool | None, task: runner.TaskResult,
          torch_basis: str | None = None) -> PrecisionTestResult:
    """One task's outcome as a PrecisionTestResult with its verdict."""
    def result(verdict: str, verified: bool | None, reason: str | None, **extra) -> PrecisionTestResult:
        return PrecisionTestResult(precision=precision, supported=verified is True, failure_reason=reason,
                                   spec=spec, torch=torch_claim, verified=verified, verdict=verdict, **extra)

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
    for key in ("gflops", "fp32_gflops", "rate_vs_fp32", "timing_shape"):
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
        return result(FAILED, False, reason, details=details, **errors)
    note = slow_reference_note(precision, head)
    if note:
        details["note"] = note
        return result(SLOW_REFERENCE, True, None, details=details, **errors)
    return result(VERIFIED, True, None, details=details, **errors)


def not_run(precision: str, spec: str | None, torch_claim: bool | None, reason: str) -> PrecisionTestResult:
    return PrecisionTestResult(precision=precision, supported=False, failure_reason=reason, spec=spec,
                               torch=torch_claim, verified=None, verdict=NOT_RUN)


# Running --------------------------------------------------------------------------------------------

def _recorded_torch(device: DeviceInfo) -> dict[str, Any]:
    """torch's view recorded with the device (live torch view or snapshot), precision -> bool."""
    view = device.extra.get("torch") if isinstance(device.extra, dict) else None
    return view if isinstance(view, dict) else {}


def _matrix(device: DeviceInfo, results: dict[str, PrecisionTestResult], provenance: str,
            measured_at: str | None) -> PrecisionCapabilityMatrix:
    peaks = {p: peak.gflops for p, peak in peaks_for(device).items() if p in PRECISIONS}
    return PrecisionCapabilityMatrix(
        hardware_name=device.name,
        supported_precisions=[p for p, r in results.items() if r.verified is True],
        unsupported_precisions=[p for p, r in results.items() if r.verified is False],
        theoretical_peaks=peaks, device=device.key, results=results,
        measured_at=measured_at, provenance=provenance,
    )


def unmeasured_matrix(device: DeviceInfo, reason: str, provenance: str,
                      precisions: Iterable[str] = PRECISIONS) -> PrecisionCapabilityMatrix:
    """Spec and recorded torch answers only, every precision `not_run` for `reason`."""
    spec = arch_for(device).precisions
    recorded = _recorded_torch(device)
    results = {p: not_run(p, spec.get(p), recorded.get(p), reason) for p in precisions}
    return _matrix(device, results, provenance, None)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def probe_machine(machine: Machine, devices: Iterable[DeviceInfo | str] | None = None, timeout_s: float = 120.0,
                  cancel: threading.Event | None = None, on_progress: ProgressFn | None = None,
                  precisions: Iterable[str] | None = None) -> dict[str, PrecisionCapabilityMatrix]:
    """Probe each precision on each device (all by default); {device key: matrix}.

    `timeout_s` limits each precision's task. A replayed machine is never run: spec and the recorded
    torch answers only, verified None ("not run: replayed"). `on_progress` gets dicts with `event`
    ("check", "done"), `device`, `precision`, `done`, `total` and, for "done", `verdict`.
    """
    chosen = [d if isinstance(d, DeviceInfo) else find_device(machine, d) for d in (devices or machine.devices)]
    asked = None if precisions is None else set(precisions)
    wanted = [p for p in PRECISIONS if asked is None or p in asked]
    unknown = (asked or set()) - set(PRECISIONS)
    if unknown:
        raise UsageError(f"unknown precision(s): {', '.join(sorted(unknown))} (known: {', '.join(PRECISIONS)})")
    if machine.replayed:
        return {d.key: unmeasured_matrix(d, REPLAYED_REASON, "replayed", wanted) for d in chosen}

    out: dict[str, PrecisionCapabilityMatrix] = {}
    plan: list[tuple[DeviceInfo, str]] = []
    tasks: list[runner.Task] = []
    for device in chosen:
        where = torch_device(device)
        if where is None:
            out[device.key] = unmeasured_matrix(device, "not run: torch does not see this device", "measured", wanted)
            continue
        for precision in wanted:
            plan.append((device, precision))
            tasks.append(runner.Task(TASK_TARGET, {"device": where, "precision": precision, "fp8": fp8_flavours(device)},
                                     timeout_s=timeout_s, name=f"{device.key} {precision}", progress=True))
    done = 0

    def progress(index: int, info: dict) -> None:
        if on_progress:
            device, precision = plan[index]
            on_progress({"event": "check", "device": device.key, "precision": precision, "check": info.get("check"),
                         "done": done, "total": len(tasks)})

    results: dict[str, dict[str, PrecisionTestResult]] = {}

    position = {id(task): i for i, task in enumerate(tasks)}

    def finished(task_result: runner.TaskResult) -> None:
        nonlocal done
        device, precision = plan[position[id(task_result.task)]]
        recorded = _recorded_torch(device)
        verdict = judge(precision, arch_for(device).precisions.get(precision), recorded.get(precision), task_result)
        results.setdefault(device.key, {})[precision] = verdict
        done += 1
        if on_progress:
            on_progress({"event": "done", "device": device.key, "precision": precision, "done": done,
                         "total": len(tasks), "verdict": verdict.verdict, "seconds": round(task_result.duration_s, 2),
                         "reason": verdict.failure_reason})

    measured_at = _now()
    if tasks:
        for task_result in runner.run_tasks(tasks, cancel=cancel, on_progress=progress, on_result=finished):
            device, precision = plan[position[id(task_result.task)]]
            if precision not in results.get(device.key, {}):  # tasks cancelled before they began
                finished(task_result)
    for device in chosen:
        if device.key in results:
            ordered = {p: results[device.key][p] for p in wanted if p in results[device.key]}
            out[device.key] = _matrix(device, ordered, "measured", measured_at)
    return {d.key: out[d.key] for d in chosen if d.key in out}


# The probe JSON contract (design.md) ----------------------------------------------------------------

def precision_json(result: PrecisionTestResult) -> dict[str, Any]:
    details = result.details or {}
    return {
        "spec": result.spec == "native", "support": result.spec, "torch": result.torch,
        "verified": result.verified, "verdict": result.verdict,
        "max_rel_error": result.max_rel_error, "max_abs_error": result.max_abs_error,
        "failure_reason": result.failure_reason, "note": details.get("note"),
        "rate_vs_fp32": details.get("rate_vs_fp32"), "torch_basis": details.get("torch_basis"),
        "checks": details.get("checks", []),
    }


def probe_json(machine: Machine, matrices: dict[str, PrecisionCapabilityMatrix]) -> dict[str, Any]:
    by_key = {d.key: d for d in machine.devices}
    devices = []
    for key, matrix in matrices.items():
        device = by_key.get(key)
        devices.append({
            "index": device.index if device else None, "key": key,
            "vendor": device.vendor if device else None, "name": matrix.hardware_name,
            "arch": arch_for(device).family if device else None,
            "provenance": matrix.provenance, "measured_at": matrix.measured_at,
            "precisions": {p: precision_json(r) for p, r in matrix.results.items()},
        })
    return {"version": PROBE_VERSION, "replayed": machine.replayed, "source": machine.label, "devices": devices}


# Remembered results ---------------------------------------------------------------------------------

def remember(machine: Machine, matrices: dict[str, PrecisionCapabilityMatrix]) -> Any:
    """Save measured matrices (merged with those of devices not probed this time); replays are not saved."""
    if machine.replayed:
        return None
    previous = remembered(machine)
    merged = dict(previous[1]) if previous else {}
    merged.update({k: m for k, m in matrices.items() if m.provenance == "measured"})
    return store.save(STORE_KIND, machine, {"version": PROBE_VERSION,
                                             "matrices": {k: m.to_dict() for k, m in merged.items()}})


def remembered(machine: Machine) -> tuple[str, dict[str, PrecisionCapabilityMatrix]] | None:
    """(saved_at, {device key: matrix}) of the last saved probe of this machine, or None."""
    record = store.load(STORE_KIND, machine)
    if record is None:
        return None
    saved_at, data = record
    try:
        matrices = {k: PrecisionCapabilityMatrix.from_dict(v) for k, v in data["matrices"].items()}
    except (KeyError, TypeError, AttributeError):
        return None  # an older or damaged record counts as none
    return saved_at, matrices
