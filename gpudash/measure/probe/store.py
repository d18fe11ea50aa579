"""Remembered probe results: the newest measurement of each precision of each device of a machine, for the
TUI, `gpudash export` and gpudash.amp.

Written by the probe action and the export after every live probe. Results merge per precision: a newer run that
probed only some precisions (or was cut short) replaces those and keeps the older results of every other one,
so a partial run never hides an earlier measurement. Each result carries the time it was measured in
details["measured_at"]; the matrix's measured_at is the newest of them. Replays are never saved.
"""

from __future__ import annotations

from typing import Any

from gpudash import store
from gpudash.devices import Machine
from gpudash.field_checks import FieldProblem, build
from gpudash.measure.probe.report import PROBE_VERSION
from gpudash.measure.schema import NOT_RUN, PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo

PROBE_KIND = "probe"


def _copy(result: PrecisionTestResult, measured_at: str | None) -> PrecisionTestResult:
    copy = PrecisionTestResult.from_dict(result.to_dict())
    copy.details = dict(copy.details or {})
    if measured_at and "measured_at" not in copy.details:
        copy.details["measured_at"] = measured_at
    return copy


def merge(older: PrecisionCapabilityMatrix | None, newer: PrecisionCapabilityMatrix) -> PrecisionCapabilityMatrix:
    """`newer`'s results over `older`'s, precision by precision; a precision `newer` did not run keeps its
    older result."""
    results = {p: _copy(r, older.measured_at) for p, r in older.results.items()} if older else {}
    for precision, result in newer.results.items():
        if result.verdict == NOT_RUN and precision in results:
            continue  # not run this time (cancelled, not asked for): the older measurement stands
        results[precision] = _copy(result, newer.measured_at)
    times = [t for t in ((r.details or {}).get("measured_at") for r in results.values()) if isinstance(t, str)]
    return PrecisionCapabilityMatrix(
        hardware_name=newer.hardware_name,
        supported_precisions=[p for p, r in results.items() if r.verified is True],
        unsupported_precisions=[p for p, r in results.items() if r.verified is False],
        peak_gflops_by_precision={
            **(older.peak_gflops_by_precision if older else {}),
            **newer.peak_gflops_by_precision,
        },
        speedup_vs_fp32={**(older.speedup_vs_fp32 if older else {}), **newer.speedup_vs_fp32},
        theoretical_peaks=dict(newer.theoretical_peaks or (older.theoretical_peaks if older else {})),
        device=newer.device,
        results=results,
        measured_at=max(times) if times else newer.measured_at,
        provenance=newer.provenance,
    )


def remember(machine: Machine, matrices: dict[str, PrecisionCapabilityMatrix]) -> Any:
    """Save measured matrices, merged per precision with what was remembered; replays are not saved."""
    if machine.replayed:
        return None
    previous = remembered(machine)
    merged = dict(previous[1]) if previous else {}
    for key, matrix in matrices.items():
        if matrix.provenance == "measured":
            merged[key] = merge(merged.get(key), matrix)
    return store.save(
        PROBE_KIND, machine, {"version": PROBE_VERSION, "matrices": {k: m.to_dict() for k, m in merged.items()}}
    )


def remembered(machine: Machine) -> tuple[str, dict[str, PrecisionCapabilityMatrix]] | None:
    """(saved_at, {device key: matrix}) of the last saved probe of this machine, or None."""
    record = store.load(PROBE_KIND, machine)
    if record is None:
        return None
    saved_at, data = record
    path = store.path_of(PROBE_KIND, machine)
    if not isinstance(data, dict):
        store.damaged(path, f"expected an object with version and matrices, found {type(data).__name__}")
        return None
    if data.get("version") != PROBE_VERSION:  # measured differently, so not shown as this one's
        store.damaged(
            path,
            f"written by another gpudash (probe record version {data.get('version')!r}, "
            f"this gpudash reads {PROBE_VERSION}); the next probe replaces it",
        )
        return None
    found = data.get("matrices")
    try:
        if not isinstance(found, dict):
            raise FieldProblem("matrices: missing or not an object")
        matrices = {k: build(PrecisionCapabilityMatrix, v, f"matrices.{k}") for k, v in found.items()}
    except FieldProblem as exc:  # damaged or edited by hand: shown as nothing remembered, said once
        store.damaged(path, str(exc))
        return None
    return saved_at, matrices


def remembered_matrix(machine: Machine, device: DeviceInfo) -> PrecisionCapabilityMatrix | None:
    """The remembered probe matrix of one device, when it was measured on this very device (same key and name)."""
    if machine.replayed:
        return None
    saved = remembered(machine)
    matrix = saved[1].get(device.key) if saved else None
    if matrix is None:
        return None
    if matrix.hardware_name and matrix.hardware_name != device.name:  # the file is named after this machine's
        # devices, so only an edited or mixed-up file gets here
        store.damaged(
            store.path_of(PROBE_KIND, machine),
            f"the probe of {device.key} was measured on {matrix.hardware_name}, not on this {device.name}",
        )
        return None
    return matrix
