"""Calibration profiles: one device's benchmark as a JSON file in the calibration seed's layout.

    {"format": "gpudash-profile", "version": 1,
     "metadata": {"hardware_name", "calibration_date", "device_type", "platform_architecture",
                  "torch_version", "gpudash_version", ...},
     "theoretical_peak_gflops": <fp32 peak or null>,
     "precision_matrix": PrecisionCapabilityMatrix,
     "operation_profiles": {"matmul_4096x4096x4096": {"operation_type": "matmul", "shape": [M, N, K],
                            "precision_results": {"bf16": PrecisionTestResult, ...}}, ...},
     "memory_bandwidth": [...], "peak_provenance": {...}, "notes": [...]}

`save_profile`/`load_profile` round-trip it without loss; `compare_profiles` gives the speedup table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from gpudash import __version__
from gpudash.errors import GpudashError
from gpudash.fileio import atomic_write_text
from gpudash.measure.bench import BenchReport
from gpudash.measure.presets import device_type, normalise_arch
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
    def from_dict(cls, data: dict[str, Any]) -> "OperationCalibration":
        op = from_dict(cls, data)
        op.precision_results = {p: PrecisionTestResult.from_dict(r)
                                for p, r in (data.get("precision_results") or {}).items()}
        return op


@dataclass
class CalibrationProfile:
    metadata: CalibrationMetadata
    precision_matrix: PrecisionCapabilityMatrix
    operation_profiles: dict[str, OperationCalibration] = field(default_factory=dict)
    theoretical_peak_gflops: float | None = None  # the seed's single figure: the fp32 peak
    memory_bandwidth: list[dict] = field(default_factory=list)
    peak_provenance: dict[str, dict] = field(default_factory=dict)
    median_gflops_by_precision: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, **to_dict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CalibrationProfile":
        return cls(
            metadata=from_dict(CalibrationMetadata, data["metadata"]),
            precision_matrix=PrecisionCapabilityMatrix.from_dict(data["precision_matrix"]),
            operation_profiles={k: OperationCalibration.from_dict(v)
                                for k, v in (data.get("operation_profiles") or {}).items()},
            theoretical_peak_gflops=data.get("theoretical_peak_gflops"),
            memory_bandwidth=list(data.get("memory_bandwidth") or []),
            peak_provenance=dict(data.get("peak_provenance") or {}),
            median_gflops_by_precision=dict(data.get("median_gflops_by_precision") or {}),
            notes=list(data.get("notes") or []),
        )


def _op_key(shape: list[int]) -> str:
    return "matmul_" + "x".join(str(d) for d in shape)


def profile_from_report(report: BenchReport, machine, preset: str | None = None) -> CalibrationProfile:
    """A seed-layout profile of one device's benchmark."""
    device = next((d for d in machine.devices if d.key == report.device), None)
    ops: dict[str, OperationCalibration] = {}
    best = report.matrix.peak_gflops_by_precision
    for entry in report.results:
        p, shape = entry["precision"], list(entry["shape"])
        op = ops.setdefault(_op_key(shape), OperationCalibration("matmul", shape))
        speedup = None
        fp32 = next((e for e in report.results if e["precision"] == "fp32" and e["shape"] == shape), None)
        if fp32 is not None:
            speedup = entry["gflops"] / fp32["gflops"]
        op.precision_results[p] = PrecisionTestResult(
            precision=p, supported=True, measured_gflops=entry["gflops"], efficiency=entry.get("efficiency"),
            mean_latency_ms=entry["mean_s"] * 1000.0, speedup_vs_fp32=speedup, test_size=max(shape),
            num_trials=entry["reps"],
            details={"median_latency_ms": entry["median_s"] * 1000.0, "spread": entry.get("spread"),
                     "other_load": entry.get("other_load"), "best_shape": entry["gflops"] == best.get(p)})
    fp32_peak = report.matrix.theoretical_peaks.get("fp32")
    meta = CalibrationMetadata(
        hardware_name=report.name, calibration_date=report.matrix.measured_at,
        device_type=device_type(device) if device is not None else ("cpu" if report.vendor == "cpu" else "cuda"),
        platform_architecture=normalise_arch(machine.host.machine), torch_version=report.torch or machine.runtime.torch,
        device=report.device, vendor=report.vendor, mode=report.mode, preset=preset,
        provenance=report.provenance, hostname=machine.host.hostname)
    return CalibrationProfile(meta, report.matrix, ops, fp32_peak, list(report.memory_bandwidth),
                              dict(report.peak_provenance), dict(report.median_gflops_by_precision),
                              list(report.notes))


def report_from_profile(profile: CalibrationProfile) -> BenchReport:
    """The profile as a BenchReport, so it can be shown like a fresh run."""
    meta = profile.metadata
    results = []
    for op in profile.operation_profiles.values():
        for p, r in op.precision_results.items():
            d = r.details or {}
            results.append({"precision": p, "op": op.operation_type, "shape": list(op.shape),
                            "gflops": r.measured_gflops, "median_s": (d.get("median_latency_ms") or 0.0) / 1000.0,
                            "mean_s": (r.mean_latency_ms or 0.0) / 1000.0, "spread": d.get("spread"),
                            "reps": r.num_trials, "efficiency": r.efficiency, "other_load": d.get("other_load")})
    index = int(meta.device.split(":")[1]) if meta.device and ":" in meta.device else 0
    return BenchReport(device=meta.device or "", index=index, vendor=meta.vendor or "", name=meta.hardware_name,
                       matrix=profile.precision_matrix, results=results, memory_bandwidth=profile.memory_bandwidth,
                       peak_provenance=profile.peak_provenance,
                       median_gflops_by_precision=profile.median_gflops_by_precision, mode=meta.mode or "quick",
                       replayed=meta.provenance == "replayed", notes=profile.notes, torch=meta.torch_version)


def save_profile(profile: CalibrationProfile, path) -> bool:
    return atomic_write_text(path, json.dumps(profile.to_dict(), indent=2) + "\n")


def load_profile(path) -> CalibrationProfile:
    """Read a profile; any problem is one line naming the file."""
    try:
        text = open(path, encoding="utf-8").read()
    except FileNotFoundError:
        raise GpudashError(f"{path}: profile not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GpudashError(f"{path}: cannot read profile: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GpudashError(f"{path}: not a JSON profile: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GpudashError(f"{path}: not a gpudash profile (no \"format\": \"{FORMAT}\")")
    for key in ("metadata", "precision_matrix"):
        if not isinstance(data.get(key), dict):
            raise GpudashError(f"{path}: profile has no '{key}' object")
    if not data["metadata"].get("hardware_name"):
        raise GpudashError(f"{path}: profile metadata has no 'hardware_name'")
    try:
        return CalibrationProfile.from_dict(data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise GpudashError(f"{path}: damaged profile: {exc}") from None


def compare_profiles(a: CalibrationProfile, b: CalibrationProfile) -> list[dict]:
    """Per precision: best GFLOPS in A and B, B / A, and each one's speedup over its own fp32."""
    pa, pb = a.precision_matrix, b.precision_matrix
    order = [p for p in list(pa.results) + list(pb.results)]
    rows = []
    for p in dict.fromkeys(order):
        ga, gb = pa.peak_gflops_by_precision.get(p), pb.peak_gflops_by_precision.get(p)
        rows.append({
            "precision": p, "a_gflops": ga, "b_gflops": gb,
            "b_over_a": gb / ga if ga and gb else None,
            "a_speedup_vs_fp32": 1.0 if p == "fp32" and ga else pa.speedup_vs_fp32.get(p),
            "b_speedup_vs_fp32": 1.0 if p == "fp32" and gb else pb.speedup_vs_fp32.get(p),
        })
    return rows
