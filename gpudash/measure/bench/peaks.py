"""The theoretical peaks a benchmark is measured against: the tables' (or a preset's), where each came
from, and the check that throws out estimates a measurement has proved too low."""

from __future__ import annotations

from gpudash.knowledge import peaks_for
from gpudash.measure.schema import PrecisionTestResult
from gpudash.models import DeviceInfo


def bench_peaks(device: DeviceInfo, overrides: dict | None) -> dict:
    """precision -> knowledge.Peak: the tables', with a calibration preset's `overrides` on top."""
    peaks = dict(peaks_for(device))
    peaks.update(overrides or {})
    return peaks


def peak_provenance(peaks: dict) -> dict[str, dict]:
    """precision -> {provenance, basis}: where each peak came from, for the report."""
    return {p: {"provenance": pk.provenance, "basis": pk.basis} for p, pk in peaks.items()}


def check_estimated_peaks(
    records: dict[str, PrecisionTestResult], entries: list[dict], peaks: dict, peak_info: dict[str, dict] | None = None
) -> list[str]:
    """An estimated peak below a measurement is proof the estimate is wrong (VMs report the base clock, not
    the turbo the cores run at). Then no efficiency against estimated peaks is shown: above 1 it would be
    nonsense, below 1 it would rest on the same wrong clock. `peak_info` entries get "too_low": true, so
    other figures against the same peaks (plugin benchmarks) can follow suit."""
    estimated = {p for p, pk in peaks.items() if pk.provenance != "spec"}
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
