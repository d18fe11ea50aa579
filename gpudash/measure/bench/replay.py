"""The benchmark report of a replayed machine: nothing is measured, the spec peaks are shown with their provenance."""

from __future__ import annotations

from typing import Any

from gpudash.knowledge import arch_for, peak_memory_bandwidth_gbps
from gpudash.measure.bench.peaks import bench_peaks, peak_provenance
from gpudash.measure.bench.report import BenchReport
from gpudash.measure.schema import NOT_RUN, PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import NOT_RUN_REPLAYED, REPLAYED, DeviceInfo
from gpudash.precisions import PRECISIONS


def replayed_report(device: DeviceInfo, precisions: list[str] | None, mode: str, overrides: dict | None) -> BenchReport:
    arch = arch_for(device)
    peaks = bench_peaks(device, overrides)
    results = {}
    for p in precisions or PRECISIONS:
        results[p] = PrecisionTestResult(
            precision=p,
            supported=False,
            failure_reason=NOT_RUN_REPLAYED,
            spec=arch.precisions.get(p),
            verified=None,
            verdict=NOT_RUN,
        )
    matrix = PrecisionCapabilityMatrix(
        hardware_name=device.name,
        theoretical_peaks={p: pk.gflops for p, pk in peaks.items()},
        device=device.key,
        results=results,
        provenance=REPLAYED,
    )
    bandwidth: list[dict[str, Any]] = [{"op": "copy", "status": "not_run", "reason": NOT_RUN_REPLAYED}]
    spec_bw = peak_memory_bandwidth_gbps(device)
    if spec_bw is not None:
        bandwidth[0].update(peak_gbps=spec_bw.gflops, peak_provenance=spec_bw.provenance, peak_basis=spec_bw.basis)
    return BenchReport(
        device=device.key,
        index=device.index,
        vendor=device.vendor,
        name=device.name,
        matrix=matrix,
        memory_bandwidth=bandwidth,
        mode=mode,
        replayed=True,
        peak_provenance=peak_provenance(peaks),
        notes=["replayed machine: nothing was measured; peaks are from the tables, labelled with their provenance"],
    )
