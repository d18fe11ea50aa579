"""Remembered benchmark runs: the last runs of a machine (the bench history), newest first when read, and the
newest measured speed of each precision of a device across them.

Written by the bench action after every live run of `gpudash bench` or the TUI's Benchmarks view, and by
`gpudash export` after its own quick benchmark; read by that view (earlier runs, before/after) and, through
`remembered_speedups`, by the export and gpudash.amp. A newer run that measured only some precisions
(`bench --precisions fp32`) never hides an older run's measurement of another precision: each precision's
figure comes from the newest run that measured it reliably, with that run's time. A figure measured under
contention, or one the hardware cannot produce (measure/bench/plausibility.py), is kept in the history for the
views but never becomes the remembered figure.
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


BUSY = 0.10  # a run kept before figures carried their reliability: other processes' share that disqualifies it
KEEP_HISTORY = 5  # older reliable figures kept beside the newest, for decisions that need a conclusive one


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _unreliable(entry: dict[str, Any], precision: str, device: DeviceInfo, speed: float) -> str | None:
    """Why this run's speed of `precision` over fp32 must not be remembered, or None when it may.

    A run records each figure's reliability (contention) and plausibility; a run kept before it did is judged
    from what it kept: the CPU share other processes took while its cases ran, and the plausibility bounds."""
    from gpudash.measure.bench.plausibility import above_peak, beyond_ratio

    records = _as_dict(entry.get("precisions"))
    for name in (precision, "fp32"):
        record = _as_dict(records.get(name))
        details = _as_dict(record.get("details"))
        why = details.get("implausible_reason") or details.get("unreliable_reason")
        if why or details.get("reliable") is False:
            return f"{name}: {why or 'unreliable'}"
        if "reliable" not in details:  # kept before reliability was recorded
            busy = [
                r.get("other_load") or 0.0
                for r in entry.get("results") or []
                if isinstance(r, dict) and r.get("precision") == name
            ]
            if busy and max(busy) > BUSY:
                return f"{name}: measured while other processes took up to {max(busy):.0%} of the CPU"
        why = above_peak(device, name, record.get("measured_gflops"))
        if why:
            return why
    return beyond_ratio(device, precision, speed)


def _figure(entry: dict[str, Any], precision: str, value: float, saved_at: str) -> dict[str, Any]:
    details = _as_dict(_as_dict(_as_dict(entry.get("precisions")).get(precision)).get("details"))
    band = details.get("speedup_range")
    ok = isinstance(band, list) and len(band) == 2 and all(isinstance(b, (int, float)) and b > 0 for b in band)
    return {
        "value": value,
        "range": [float(b) for b in band] if ok and isinstance(band, list) else None,
        "measured_at": entry.get("measured_at") or saved_at,
        "mode": entry.get("mode"),
    }


def remembered_speedups(machine: Machine, device: DeviceInfo) -> PrecisionCapabilityMatrix | None:
    """Each precision's speed over fp32 from the newest kept run that measured it reliably on this device, as a
    matrix (`speedup_vs_fp32`, and per-precision results whose details say when, in which run mode, with which
    spread (`speedup_range`), the older reliable figures (`history`) and the newer ones passed over as unreliable
    or implausible (`passed_over`)); None when no kept run has a figure.

    A contended or implausible figure is never remembered: the figure before it stands. A run that found the
    precision failing decides like a figure does (the newest run that measured it, figure or failure)."""
    if machine.replayed:
        return None
    speedups: dict[str, float] = {}
    results: dict[str, PrecisionTestResult] = {}
    decided: set[str] = set()
    passed_over: dict[str, list[str]] = {}
    for saved_at, doc in saved_runs(machine):
        for entry in doc.get("devices") or []:
            if not isinstance(entry, dict) or not _same_device(entry, device):
                continue
            raw = entry.get("speedup_vs_fp32")
            speeds: dict[str, Any] = raw if isinstance(raw, dict) else {}
            listed = entry.get("precisions")
            names = set(speeds) | (set(listed) if isinstance(listed, dict) else set())
            for precision in sorted(names):
                if precision == "fp32" or not _measured(entry, precision):
                    continue
                value = speeds.get(precision)
                speed = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
                if speed is not None and speed <= 0:
                    speed = None
                if speed is not None:
                    why = _unreliable(entry, precision, device, speed)
                    if why:
                        when = entry.get("measured_at") or saved_at
                        passed_over.setdefault(precision, []).append(f"{when}: {speed:.2f}x, {why}")
                        continue
                if precision in decided:
                    if speed is not None and precision in results:
                        history = results[precision].details.setdefault("history", [])
                        if len(history) < KEEP_HISTORY:
                            history.append(_figure(entry, precision, speed, saved_at))
                    continue
                decided.add(precision)  # the newest run that measured it decides, figure or failure
                if speed is not None:
                    speedups[precision] = speed
                    figure = _figure(entry, precision, speed, saved_at)
                    results[precision] = PrecisionTestResult(
                        precision=precision,
                        supported=True,
                        speedup_vs_fp32=speed,
                        details={
                            "measured_at": figure["measured_at"],
                            "mode": entry.get("mode"),
                            "speedup_range": figure["range"],
                            "history": [],
                            "passed_over": list(passed_over.get(precision, [])),
                        },
                    )
    for precision, lines in passed_over.items():
        if precision not in results:  # only unreliable figures: kept as a record with no speed, to say why
            results[precision] = PrecisionTestResult(
                precision=precision,
                supported=False,
                failure_reason=f"no reliable measurement ({len(lines)} passed over)",
                details={"measured_at": lines[0].split(": ", 1)[0], "passed_over": lines},
            )
    if not results:
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
