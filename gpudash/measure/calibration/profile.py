"""Calibration profiles: one device's benchmark as a JSON file in the multi-precision
calibration layout (gpudash/contracts/profile.schema.json).

    {"format": "gpudash-profile", "version": 1,
     "metadata": {"hardware_name", "calibration_date", "device_type", "platform_architecture",
                  "torch_version", "gpudash_version", ...},
     "theoretical_peak_gflops": <fp32 peak or null>,
     "precision_matrix": PrecisionCapabilityMatrix,
     "operation_profiles": {"matmul_4096x4096x4096": {"operation_type": "matmul", "shape": [M, N, K],
                            "precision_results": {"bf16": PrecisionTestResult, ...}}, ...},
     "memory_bandwidth": [...], "peak_provenance": {...}, "notes": [...]}

`save_profile`/`load_profile` round-trip it without loss. `profile_report` turns a benchmark into a
profile and back; `profile_compare` sets two side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash import __version__, strict_json
from gpudash.errors import GpudashError
from gpudash.field_checks import FieldProblem, build
from gpudash.fileio import atomic_write_text, read_user_file
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import from_dict, to_dict

FORMAT, VERSION = "gpudash-profile", 1


@dataclass
class CalibrationMetadata:
    hardware_name: str
    calibration_date: str | None = None
    device_type: str = "cpu"  # "cpu" | "cuda"
    platform_architecture: str = "unknown"  # "x86_64" | "aarch64"
    torch_version: str | None = None
    gpudash_version: str = __version__
    device: str | None = None  # gpudash device key, e.g. "cpu:0"
    vendor: str | None = None
    mode: str | None = None  # "quick" | "full"
    preset: str | None = None
    provenance: str = "measured"  # "measured", or "replayed" when nothing ran
    hostname: str | None = None


@dataclass
class OperationCalibration:
    operation_type: str
    shape: list[int] = field(default_factory=list)
    precision_results: dict[str, PrecisionTestResult] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OperationCalibration:
        op = from_dict(cls, data)
        op.precision_results = {
            p: PrecisionTestResult.from_dict(r) for p, r in (data.get("precision_results") or {}).items()
        }
        return op


@dataclass
class CalibrationProfile:
    metadata: CalibrationMetadata
    precision_matrix: PrecisionCapabilityMatrix
    operation_profiles: dict[str, OperationCalibration] = field(default_factory=dict)
    theoretical_peak_gflops: float | None = None  # the format's single peak figure: the fp32 peak
    memory_bandwidth: list[dict] = field(default_factory=list)
    peak_provenance: dict[str, dict] = field(default_factory=dict)
    median_gflops_by_precision: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, **to_dict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CalibrationProfile:
        return cls(
            metadata=from_dict(CalibrationMetadata, data["metadata"]),
            precision_matrix=PrecisionCapabilityMatrix.from_dict(data["precision_matrix"]),
            operation_profiles={
                k: OperationCalibration.from_dict(v) for k, v in (data.get("operation_profiles") or {}).items()
            },
            theoretical_peak_gflops=data.get("theoretical_peak_gflops"),
            memory_bandwidth=list(data.get("memory_bandwidth") or []),
            peak_provenance=dict(data.get("peak_provenance") or {}),
            median_gflops_by_precision=dict(data.get("median_gflops_by_precision") or {}),
            notes=list(data.get("notes") or []),
        )


def save_profile(profile: CalibrationProfile, path) -> bool:
    return atomic_write_text(path, strict_json.dumps(profile.to_dict(), indent=2) + "\n")


def load_profile(path) -> CalibrationProfile:
    """Read a profile; any problem is one line naming the file (and the field): a regular file of bounded size,
    strict JSON, the profile contract (gpudash/contracts/profile.schema.json), every field's type and range."""
    text = read_user_file(path, "profile")
    try:
        data = strict_json.loads(text)
    except strict_json.JsonProblem as exc:
        raise GpudashError(f"{path}: not a JSON profile: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GpudashError(f'{path}: not a gpudash profile (no "format": "{FORMAT}")')
    for key in ("metadata", "precision_matrix"):
        if not isinstance(data.get(key), dict):
            raise GpudashError(f"{path}: profile has no '{key}' object")
    if not data["metadata"].get("hardware_name"):
        raise GpudashError(f"{path}: profile metadata has no 'hardware_name'")
    from gpudash.contracts.validation import problems

    for problem in problems("profile", data):
        raise GpudashError(f"{path}: damaged profile: {problem}")
    try:
        return build(CalibrationProfile, data, "")
    except FieldProblem as exc:
        raise GpudashError(f"{path}: damaged profile: {exc}") from None
