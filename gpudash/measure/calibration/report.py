"""A calibration profile from one device's BenchReport, and back, so a saved profile shows like a fresh run."""

from __future__ import annotations

from gpudash.measure.bench.report import BenchReport
from gpudash.measure.calibration.platform import device_type, normalise_arch
from gpudash.measure.calibration.profile import CalibrationMetadata, CalibrationProfile, OperationCalibration
from gpudash.measure.schema import PrecisionTestResult


def _op_key(shape: list[int]) -> str:
    return "matmul_" + "x".join(str(d) for d in shape)


def profile_from_report(report: BenchReport, machine, preset: str | None = None) -> CalibrationProfile:
    """A calibration-layout profile of one device's benchmark."""
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
            precision=p,
            supported=True,
            measured_gflops=entry["gflops"],
            efficiency=entry.get("efficiency"),
            mean_latency_ms=entry["mean_s"] * 1000.0,
            speedup_vs_fp32=speedup,
            test_size=max(shape),
            num_trials=entry["reps"],
            details={
                "median_latency_ms": entry["median_s"] * 1000.0,
                "spread": entry.get("spread"),
                "other_load": entry.get("other_load"),
                "best_shape": entry["gflops"] == best.get(p),
            },
        )
    fp32_peak = report.matrix.theoretical_peaks.get("fp32")
    meta = CalibrationMetadata(
        hardware_name=report.name,
        calibration_date=report.matrix.measured_at,
        device_type=device_type(device) if device is not None else ("cpu" if report.vendor == "cpu" else "cuda"),
        platform_architecture=normalise_arch(machine.host.machine),
        torch_version=report.torch or machine.runtime.torch,
        device=report.device,
        vendor=report.vendor,
        mode=report.mode,
        preset=preset,
        provenance=report.provenance,
        hostname=machine.host.hostname,
    )
    return CalibrationProfile(
        meta,
        report.matrix,
        ops,
        fp32_peak,
        list(report.memory_bandwidth),
        dict(report.peak_provenance),
        dict(report.median_gflops_by_precision),
        list(report.notes),
    )


def report_from_profile(profile: CalibrationProfile) -> BenchReport:
    """The profile as a BenchReport, so it can be shown like a fresh run."""
    meta = profile.metadata
    results = []
    for op in profile.operation_profiles.values():
        for p, r in op.precision_results.items():
            d = r.details or {}
            results.append(
                {
                    "precision": p,
                    "op": op.operation_type,
                    "shape": list(op.shape),
                    "gflops": r.measured_gflops,
                    # None where the file holds no median (the calibration layout, older profiles): shown as "–"
                    "median_s": d["median_latency_ms"] / 1000.0 if d.get("median_latency_ms") is not None else None,
                    "mean_s": (r.mean_latency_ms or 0.0) / 1000.0,
                    "spread": d.get("spread"),
                    "reps": r.num_trials,
                    "efficiency": r.efficiency,
                    "other_load": d.get("other_load"),
                }
            )
    index = int(meta.device.split(":")[1]) if meta.device and ":" in meta.device else 0
    return BenchReport(
        device=meta.device or meta.device_type,  # a calibration-layout profile names no gpudash device
        index=index,
        vendor=meta.vendor or "",
        name=meta.hardware_name,
        matrix=profile.precision_matrix,
        results=results,
        memory_bandwidth=profile.memory_bandwidth,
        peak_provenance=profile.peak_provenance,
        median_gflops_by_precision=profile.median_gflops_by_precision,
        mode=meta.mode or "quick",
        replayed=meta.provenance == "replayed",
        notes=profile.notes,
        torch=meta.torch_version,
    )
