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

`load_profile` also reads what the calibration document itself writes (its "Generated Profile Structure": no
"format" key, a precision_matrix without gpudash's per-precision `results`, operation keys such as
"matmul_1024_large" without a shape) and profiles older than its precision_matrix, as that document promises
they stay loadable: the matrix is then completed from what the file holds (each operation's precision_results,
the matrix's own lists and figures), so every figure in the file shows. Nothing is invented: a figure the file
does not hold stays empty. The source project's layouts before that (`"precision_matrix": null`, figures per
operation) are first brought to the calibration layout by `legacy.upgrade`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash import __version__, strict_json
from gpudash.errors import UsageError
from gpudash.field_checks import FieldProblem, build
from gpudash.fileio import atomic_write_text, read_user_file
from gpudash.measure.calibration.legacy import is_legacy, upgrade
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import from_dict, to_dict
from gpudash.precisions import PRECISIONS

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
            precision_matrix=PrecisionCapabilityMatrix.from_dict(
                data.get("precision_matrix") or {"hardware_name": data["metadata"]["hardware_name"]}
            ),
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


def _calibration_layout(data: dict[str, Any]) -> bool:
    """The calibration document's own layout: metadata with a precision matrix or operation profiles."""
    return isinstance(data.get("metadata"), dict) and any(
        isinstance(data.get(k), dict) for k in ("precision_matrix", "operation_profiles")
    )


def load_profile(path) -> CalibrationProfile:
    """Read a profile (gpudash's, the calibration document's layout, or one older than its precision matrix);
    any problem is one line naming the file (and the field): a regular file of bounded size, strict JSON, and its
    contract (gpudash/contracts/profile.schema.json) when gpudash wrote it, and every field's type and range
    in any layout."""
    text = read_user_file(path, "profile", UsageError)
    try:
        data = strict_json.loads(text)
    except strict_json.JsonProblem as exc:
        raise UsageError(f"{path}: not a JSON profile: {exc}") from None
    if not isinstance(data, dict) or (
        data.get("format", FORMAT) != FORMAT or not ("format" in data or _calibration_layout(data))
    ):
        raise UsageError(
            f'{path}: not a gpudash profile (no "format": "{FORMAT}", and not the calibration layout: '
            '"metadata" with "precision_matrix" or "operation_profiles")'
        )
    if not isinstance(data.get("metadata"), dict):
        raise UsageError(f"{path}: profile has no 'metadata' object")
    if not any(isinstance(data.get(k), dict) for k in ("precision_matrix", "operation_profiles")):
        raise UsageError(f"{path}: profile has no 'precision_matrix' or 'operation_profiles' object")
    if is_legacy(data):  # the source project's older layouts: figures per operation, no matrix
        data = upgrade(data)
    current = (
        "version" in data and "format" in data and isinstance(data.get("precision_matrix"), dict)
    )  # as gpudash writes it
    if not data["metadata"].get("hardware_name"):
        raise UsageError(f"{path}: profile metadata has no 'hardware_name'")
    from gpudash.contracts.validation import problems

    for problem in problems("profile", data) if current else ():
        raise UsageError(f"{path}: damaged profile: {problem}")
    try:
        # Every field's type and range is checked, whatever the layout; what another layout leaves out is
        # filled in below, from what it holds.
        if "precision_matrix" not in data:  # older than the matrix: an empty one, filled in by complete()
            data = {**data, "precision_matrix": {"hardware_name": data["metadata"]["hardware_name"]}}
        profile = build(CalibrationProfile, data, "")
        if "gpudash_version" not in data["metadata"]:  # not written by gpudash: do not claim this version wrote it
            profile.metadata.gpudash_version = "not recorded"
        complete(profile)
        return profile
    except (FieldProblem, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UsageError(f"{path}: damaged profile: {exc}") from None


def _figure(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def complete(profile: CalibrationProfile) -> None:
    """Fill what a calibration-layout or older profile leaves out from what it holds, so its figures show:
    per-precision results from the operations (the best measured figure of each precision), else from the
    matrix's own peak figures and supported/unsupported lists; then the matrix's lists and peaks from those
    results. A gpudash-written profile is complete already and comes out unchanged."""
    matrix = profile.precision_matrix
    if matrix.results:
        return  # gpudash wrote it: complete, and an efficiency left empty was left empty on purpose
    matrix.results = _results_from(profile)
    results = matrix.results
    matrix.measured_at = matrix.measured_at or profile.metadata.calibration_date
    if not matrix.theoretical_peaks and profile.theoretical_peak_gflops is not None:
        matrix.theoretical_peaks = {"fp32": float(profile.theoretical_peak_gflops)}
    for p, r in results.items():  # the file's own two figures, measured over theoretical
        peak = _figure(matrix.theoretical_peaks.get(p))
        if r.efficiency is None and r.supported and r.measured_gflops is not None and peak:
            r.efficiency = r.measured_gflops / peak
    if not matrix.peak_gflops_by_precision:
        matrix.peak_gflops_by_precision = {
            p: r.measured_gflops for p, r in results.items() if r.supported and r.measured_gflops is not None
        }
    best = matrix.peak_gflops_by_precision
    if not matrix.speedup_vs_fp32 and best.get("fp32"):
        matrix.speedup_vs_fp32 = {p: g / best["fp32"] for p, g in best.items() if p != "fp32"}
    for p, r in results.items():
        if r.supported and r.speedup_vs_fp32 is None:
            r.speedup_vs_fp32 = 1.0 if p == "fp32" and best.get("fp32") else _figure(matrix.speedup_vs_fp32.get(p))
    if not matrix.supported_precisions and not matrix.unsupported_precisions:
        matrix.supported_precisions = [p for p, r in results.items() if r.supported]
        matrix.unsupported_precisions = [p for p, r in results.items() if not r.supported]


def _results_from(profile: CalibrationProfile) -> dict[str, PrecisionTestResult]:
    matrix = profile.precision_matrix
    out: dict[str, PrecisionTestResult] = {}
    for op in profile.operation_profiles.values():
        for p, r in op.precision_results.items():
            held = out.get(p)
            better = r.supported and (
                held is None or not held.supported or (r.measured_gflops or 0.0) > (held.measured_gflops or 0.0)
            )
            if held is None or better:
                copy = PrecisionTestResult.from_dict(r.to_dict())
                copy.details = {**(copy.details or {}), "best_shape": list(op.shape) or None}
                out[p] = copy
    for p, gflops in matrix.peak_gflops_by_precision.items():
        if p not in out and _figure(gflops) is not None:
            out[p] = PrecisionTestResult(
                precision=p,
                supported=True,
                measured_gflops=_figure(gflops),
                speedup_vs_fp32=1.0 if p == "fp32" else _figure(matrix.speedup_vs_fp32.get(p)),
            )
    for p in matrix.unsupported_precisions:
        out.setdefault(p, PrecisionTestResult(precision=p, supported=False, failure_reason="unsupported (profile)"))
    for p in matrix.supported_precisions:
        out.setdefault(p, PrecisionTestResult(precision=p, supported=True))
    order = {p: i for i, p in enumerate(PRECISIONS)}
    return dict(sorted(out.items(), key=lambda kv: order.get(kv[0], len(order))))
