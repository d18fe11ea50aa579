"""Remembered benchmark runs: the last runs of a machine (the bench history), newest first when read, and the
newest measured speed of each precision of a device across them.

Written by the bench action after every live run of `gpudash bench` or the TUI's Benchmarks view, and by
`gpudash export` after its own quick benchmark; read by that view (earlier runs, before/after) and, through
`remembered_speedups`, by the export and gpudash.amp. A newer run that measured only some precisions
(`bench --precisions fp32`) never hides an older run's measurement of another precision: each precision's
figure comes from the newest run that measured it, with that run's time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudash import store
from gpudash.devices import Machine
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import MEASURED, DeviceInfo

BENCH_HISTORY_KIND = "bench-history"
KEEP = 20  # runs kept per machine


def append_run(machine: Machine, data: dict[str, Any]) -> Path:
    """Keep one run (a bench JSON document) with the time it was saved."""
    return store.append_history(BENCH_HISTORY_KIND, machine, data, keep=KEEP)


def saved_runs(machine: Machine) -> list[tuple[str, dict[str, Any]]]:
    """(saved_at, bench JSON document) of the kept runs, newest first. A run that does not keep to the bench
    contract (gpudash/contracts/bench.schema.json) is left out with one warning: the views that draw it trust
    its fields."""
    from gpudash.contracts.validation import problems

    kept = []
    for at, data in store.history(BENCH_HISTORY_KIND, machine):
        found = problems("bench", data)
        if found:
            store.damaged(store.path_of(BENCH_HISTORY_KIND, machine), f"the run saved at {at}: {found[0]}")
            continue
        kept.append((at, data))
    return kept


def _same_device(entry: dict[str, Any], device: DeviceInfo) -> bool:
    if entry.get("key"):
        return entry["key"] == device.key and entry.get("name") in (None, "", device.name)
    return entry.get("index") == device.index and entry.get("name") == device.name


def _measured(entry: dict[str, Any], precision: str) -> bool:
    """Did this run measure `precision` (a figure or a failure), rather than skip it ("not run: ...")?"""
    results = entry.get("precisions")
    if not isinstance(results, dict):  # a run kept without per-precision records: its speedups say it all
        return precision in (entry.get("speedup_vs_fp32") or {})
    result = results.get(precision)
    if not isinstance(result, dict):
        return False
    reason = result.get("failure_reason") or ""
    return bool(result.get("supported")) or not str(reason).startswith("not run")


def remembered_speedups(machine: Machine, device: DeviceInfo) -> PrecisionCapabilityMatrix | None:
    """Each precision's speed over fp32 from the newest kept run that measured it on this device, as a matrix
    (`speedup_vs_fp32`, and per-precision results whose details say when and in which run mode); None when no
    kept run has a figure."""
    if machine.replayed:
        return None
    speedups: dict[str, float] = {}
    results: dict[str, PrecisionTestResult] = {}
    decided: set[str] = set()
    for saved_at, doc in saved_runs(machine):
        for entry in doc.get("devices") or []:
            if not isinstance(entry, dict) or not _same_device(entry, device):
                continue
            raw = entry.get("speedup_vs_fp32")
            speeds: dict[str, Any] = raw if isinstance(raw, dict) else {}
            listed = entry.get("precisions")
            names = set(speeds) | (set(listed) if isinstance(listed, dict) else set())
            for precision in names:
                if precision in decided or precision == "fp32" or not _measured(entry, precision):
                    continue
                decided.add(precision)  # the newest run that measured it decides, figure or failure
                value = speeds.get(precision)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    speedups[precision] = float(value)
                    results[precision] = PrecisionTestResult(
                        precision=precision,
                        supported=True,
                        speedup_vs_fp32=float(value),
                        details={"measured_at": entry.get("measured_at") or saved_at, "mode": entry.get("mode")},
                    )
    if not speedups:
        return None
    times = [str(r.details["measured_at"]) for r in results.values()]
    return PrecisionCapabilityMatrix(
        hardware_name=device.name,
        supported_precisions=sorted(speedups),
        speedup_vs_fp32=speedups,
        device=device.key,
        results=results,
        measured_at=max(times),
        provenance=MEASURED,
    )
