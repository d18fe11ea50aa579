"""Result records shared by probes, benchmarks and plugins, named after the multi-precision calibration format.

`PrecisionTestResult` is one precision on one device; `PrecisionCapabilityMatrix` sums a device up.
That format's fields are kept with their names and meaning; gpudash adds the verification fields
(spec, torch, verified, errors) the probe issue asks for. Both round-trip through JSON unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash.models import from_dict, to_dict

# Probe verdicts: the short word shown in tables, beside the boolean `verified`.
VERIFIED = "verified"  # ran and matched the fp64 reference within the dtype's tolerance
FAILED = "failed"  # raised, crashed, hung, or gave wrong numbers
SLOW_REFERENCE = "slow_reference"  # correct, but through a reference path far below the hardware rate
NOT_RUN = "not_run"  # could not be tried here (replayed machine, dtype missing from this torch)


@dataclass
class PrecisionTestResult:
    precision: str
    supported: bool  # the format's meaning: the precision runs correctly on this device
    failure_reason: str | None = None
    # Performance (benchmarks fill these)
    measured_gflops: float | None = None
    efficiency: float | None = None  # measured / theoretical peak
    mean_latency_ms: float | None = None
    speedup_vs_fp32: float | None = None
    test_size: int | None = None
    num_trials: int | None = None
    # Verification (probes fill these)
    spec: str | None = None  # "native" | "emulated" | "absent" from the architecture tables
    torch: bool | None = None  # what PyTorch reports, None when it has no opinion
    verified: bool | None = None  # None = not run (replayed, or not tried)
    verdict: str | None = None  # VERIFIED | FAILED | SLOW_REFERENCE | NOT_RUN
    max_rel_error: float | None = None
    max_abs_error: float | None = None
    details: dict[str, Any] = field(default_factory=dict)  # per-check evidence (conversion, autocast...)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrecisionTestResult:
        return from_dict(cls, data)


@dataclass
class PrecisionCapabilityMatrix:
    hardware_name: str
    supported_precisions: list[str] = field(default_factory=list)
    unsupported_precisions: list[str] = field(default_factory=list)
    peak_gflops_by_precision: dict[str, float] = field(default_factory=dict)
    speedup_vs_fp32: dict[str, float] = field(default_factory=dict)
    theoretical_peaks: dict[str, float] = field(default_factory=dict)
    # gpudash additions
    device: str | None = None  # device key, e.g. "cpu:0", "nvidia:1"
    results: dict[str, PrecisionTestResult] = field(default_factory=dict)
    measured_at: str | None = None  # ISO time the measurement ran
    provenance: str = "measured"  # "measured" here, or "replayed"/"spec" when nothing ran

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PrecisionCapabilityMatrix:
        matrix = from_dict(cls, data)
        matrix.results = {k: PrecisionTestResult.from_dict(v) for k, v in (data.get("results") or {}).items()}
        return matrix
