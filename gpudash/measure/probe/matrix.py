"""A device's probe verdicts summed up as a PrecisionCapabilityMatrix, and the matrix of a device not probed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpudash.knowledge import arch_for, peaks_for
from gpudash.measure.probe.verdict import not_run
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo
from gpudash.precisions import PRECISIONS


def recorded_torch(device: DeviceInfo) -> dict[str, Any]:
    """torch's view recorded with the device (live torch view or snapshot), precision -> bool."""
    view = device.extra.get("torch") if isinstance(device.extra, dict) else None
    return view if isinstance(view, dict) else {}


def capability_matrix(
    device: DeviceInfo, results: dict[str, PrecisionTestResult], provenance: str, measured_at: str | None
) -> PrecisionCapabilityMatrix:
    peaks = {p: peak.gflops for p, peak in peaks_for(device).items() if p in PRECISIONS}
    return PrecisionCapabilityMatrix(
        hardware_name=device.name,
        supported_precisions=[p for p, r in results.items() if r.verified is True],
        unsupported_precisions=[p for p, r in results.items() if r.verified is False],
        theoretical_peaks=peaks,
        device=device.key,
        results=results,
        measured_at=measured_at,
        provenance=provenance,
    )


def unmeasured_matrix(
    device: DeviceInfo, reason: str, provenance: str, precisions: Iterable[str] = PRECISIONS
) -> PrecisionCapabilityMatrix:
    """Spec and recorded torch answers only, every precision `not_run` for `reason`."""
    spec = arch_for(device).precisions
    recorded = recorded_torch(device)
    results = {p: not_run(p, spec.get(p), recorded.get(p), reason) for p in precisions}
    return capability_matrix(device, results, provenance, None)
