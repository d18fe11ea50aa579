"""The theoretical peaks a benchmark is measured against: the tables' (or a preset's), where each came
from, and the check that throws out the tables' estimates a measurement has proved too low (never a preset's)."""

from __future__ import annotations

from gpudash.knowledge import peaks_for
from gpudash.knowledge.mamf import mamf_json, of_mamf
from gpudash.measure.schema import PrecisionTestResult
from gpudash.models import DeviceInfo


def bench_peaks(device: DeviceInfo, overrides: dict | None) -> dict:
    """precision -> knowledge.Peak: the tables', or, with a calibration preset, the preset's own and nothing else
    (an efficiency against a named part must not mix in another part's figures; a precision the preset has no
    peak for gets no efficiency)."""
    if overrides is not None:
        return dict(overrides)
    return dict(peaks_for(device))


def preset_notes(records: dict[str, PrecisionTestResult], overrides: dict | None) -> list[str]:
    """A measurement above a preset's peak: the efficiency stays (it is against the preset's figure), said so."""
    beaten = [
        f"{p} {r.measured_gflops:.1f} GFLOPS"
        for p, r in records.items()
        if overrides
        and p in overrides
        and r.supported
        and r.measured_gflops
        and r.measured_gflops > overrides[p].gflops
    ]
    if not beaten:
        return []
    return [f"measured above the preset's peak ({', '.join(beaten)}): this device is faster than the named part"]


def peak_provenance(peaks: dict) -> dict[str, dict]:
    """precision -> {provenance, basis}: where each peak came from, for the report."""
    return {p: {"provenance": pk.provenance, "basis": pk.basis} for p, pk in peaks.items()}


def check_estimated_peaks(
    records: dict[str, PrecisionTestResult],
    entries: list[dict],
    peaks: dict,
    peak_info: dict[str, dict] | None = None,
    keep: frozenset[str] | set[str] = frozenset(),
) -> list[str]:
    """An estimated peak below a measurement is proof the estimate is wrong (VMs report the base clock, not
    the turbo the cores run at). Then no efficiency against estimated peaks is shown: above 1 it would be
    nonsense, below 1 it would rest on the same wrong clock. `peak_info` entries get "too_low": true, so
    other figures against the same peaks (plugin benchmarks) can follow suit. Peaks in `keep` (a calibration
    preset's: figures for a named part, not this machine's clock) are never judged or blanked here."""
    estimated = {p for p, pk in peaks.items() if pk.provenance != "spec" and p not in keep}
    if not estimated:
        return []
    beaten = [
        (p, r.measured_gflops, peaks[p].gflops)
        for p, r in records.items()
        if p in estimated and r.supported and r.measured_gflops and r.measured_gflops > peaks[p].gflops
    ]
    if not beaten:
        return ["efficiency uses estimated peaks where no datasheet figure exists (see peak_provenance)"]
    for entry in entries:
        if entry["precision"] in estimated:
            entry["efficiency"] = None
    for p in estimated & records.keys():
        records[p].efficiency = None
    if peak_info is not None:
        for p in estimated & peak_info.keys():
            peak_info[p]["too_low"] = True
    p, got, peak = max(beaten, key=lambda b: b[1] / b[2])
    return [
        f"measured {p} {got:.1f} GFLOPS exceeds the estimated peak {peak:.1f} (from the clock the OS reports, "
        "often the base clock in a VM): the estimates are too low, so efficiency is not shown for them"
    ]


def mamf_references(device: DeviceInfo, precisions: dict[str, dict]) -> dict[str, dict]:
    """precision -> the published MAMF of the device's part (knowledge.mamf), with this run's best measured figure
    over it ("of_mamf"; null where the precision did not measure). {} for a part with no published figure."""
    out = {}
    for precision, ref in mamf_json(device).items():
        result = precisions.get(precision) or {}
        measured = result.get("measured_gflops") if result.get("supported") else None
        out[precision] = {**ref, "of_mamf": of_mamf(measured, ref)}
    return out
