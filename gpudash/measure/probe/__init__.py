"""Precision probes, parent side: run every precision on every device in a child process.

Three answers per precision: `spec` (the architecture tables), `torch` (what PyTorch claims) and
`verified` (what happened when gpudash ran it). The child-side checks live in `probe_tasks`; this module
never imports torch. The parts: `probe_verdict` judges one task, `probe_matrix` sums a device up,
`probe_report` is the JSON contract, `probe_store` remembers results. Other code and the docs import
their public names from here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from gpudash.devices import Machine
from gpudash.errors import UsageError
from gpudash.knowledge import arch_for
from gpudash.measure import runner
from gpudash.measure.device_names import find_device, find_devices, torch_device
from gpudash.measure.probe.matrix import capability_matrix, recorded_torch, unmeasured_matrix
from gpudash.measure.probe.report import precision_json, probe_json
from gpudash.measure.probe.store import remember, remembered, remembered_matrix
from gpudash.measure.probe.verdict import RATE_EXEMPT, SLOW_REFERENCE_FRACTION, judge
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import NOT_RUN_REPLAYED, DeviceInfo, now_iso
from gpudash.precisions import PRECISIONS

__all__ = [
    "RATE_EXEMPT",
    "REPLAYED_REASON",
    "SLOW_REFERENCE_FRACTION",
    "TASK_TARGET",
    "find_device",
    "find_devices",
    "fp8_flavours",
    "judge",
    "precision_json",
    "probe_json",
    "probe_machine",
    "remember",
    "remembered",
    "remembered_matrix",
    "unmeasured_matrix",
]

# The child-side entry point. Tests point this at a wrapper that plants faults; nothing else changes it.
TASK_TARGET = "gpudash.measure.probe.tasks.entry:run_probe"
REPLAYED_REASON = NOT_RUN_REPLAYED

ProgressFn = Callable[[dict[str, Any]], None]


def fp8_flavours(device: DeviceInfo) -> dict[str, str]:
    """The fp8 dtypes to probe with: the architecture's own (fnuz on gfx942), else the OCP pair."""
    arch = arch_for(device)
    return {"e4m3": arch.fp8_dtype or "float8_e4m3fn", "e5m2": arch.fp8_e5m2_dtype or "float8_e5m2"}


def probe_machine(
    machine: Machine,
    devices: Iterable[DeviceInfo | str] | None = None,
    timeout_s: float = 120.0,
    cancel: threading.Event | None = None,
    on_progress: ProgressFn | None = None,
    precisions: Iterable[str] | None = None,
) -> dict[str, PrecisionCapabilityMatrix]:
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
            tasks.append(
                runner.Task(
                    TASK_TARGET,
                    {"device": where, "precision": precision, "fp8": fp8_flavours(device)},
                    timeout_s=timeout_s,
                    name=f"{device.key} {precision}",
                    progress=True,
                )
            )
    done = 0

    def progress(index: int, info: dict) -> None:
        if on_progress:
            device, precision = plan[index]
            on_progress(
                {
                    "event": "check",
                    "device": device.key,
                    "precision": precision,
                    "check": info.get("check"),
                    "done": done,
                    "total": len(tasks),
                }
            )

    results: dict[str, dict[str, PrecisionTestResult]] = {}

    position = {id(task): i for i, task in enumerate(tasks)}

    def finished(task_result: runner.TaskResult) -> None:
        nonlocal done
        device, precision = plan[position[id(task_result.task)]]
        recorded = recorded_torch(device)
        verdict = judge(precision, arch_for(device).precisions.get(precision), recorded.get(precision), task_result)
        results.setdefault(device.key, {})[precision] = verdict
        done += 1
        if on_progress:
            on_progress(
                {
                    "event": "done",
                    "device": device.key,
                    "precision": precision,
                    "done": done,
                    "total": len(tasks),
                    "verdict": verdict.verdict,
                    "seconds": round(task_result.duration_s, 2),
                    "reason": verdict.failure_reason,
                }
            )

    measured_at = now_iso()
    if tasks:
        for task_result in runner.run_tasks(tasks, cancel=cancel, on_progress=progress, on_result=finished):
            device, precision = plan[position[id(task_result.task)]]
            if precision not in results.get(device.key, {}):  # tasks cancelled before they began
                finished(task_result)
    for device in chosen:
        if device.key in results:
            ordered = {p: results[device.key][p] for p in wanted if p in results[device.key]}
            out[device.key] = capability_matrix(device, ordered, "measured", measured_at)
    return {d.key: out[d.key] for d in chosen if d.key in out}
