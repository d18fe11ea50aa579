"""Two calibration profiles side by side: per precision, B's best GFLOPS against A's."""

from __future__ import annotations

from gpudash.measure.calibration.profile import CalibrationProfile


def compare_profiles(a: CalibrationProfile, b: CalibrationProfile) -> list[dict]:
    """Per precision: best GFLOPS in A and B, B / A, and each one's speedup over its own fp32."""
    pa, pb = a.precision_matrix, b.precision_matrix
    order = [p for p in list(pa.results) + list(pb.results)]
    rows = []
    for p in dict.fromkeys(order):
        ga, gb = pa.peak_gflops_by_precision.get(p), pb.peak_gflops_by_precision.get(p)
        rows.append(
            {
                "precision": p,
                "a_gflops": ga,
                "b_gflops": gb,
                "b_over_a": gb / ga if ga and gb else None,
                "a_speedup_vs_fp32": 1.0 if p == "fp32" and ga else pa.speedup_vs_fp32.get(p),
                "b_speedup_vs_fp32": 1.0 if p == "fp32" and gb else pb.speedup_vs_fp32.get(p),
            }
        )
    return rows
