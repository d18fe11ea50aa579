"""Figures the hardware cannot produce: above a datasheet peak, or a ratio between precisions beyond what the
architecture or ISA allows. Such a figure is a measuring error (a timer that missed work, a neighbour that
slowed only one side of a comparison), so it is reported with its reason and never remembered or decided from.

The bounds come from gpudash's own peak tables (knowledge.peaks_for): datasheet peaks for GPUs, and for CPUs the
per-core rates of the ISA the CPU reports (AVX-512 FMA against AVX512-BF16 or AMX-BF16, ...). A ratio of two
peaks does not depend on the clock, so it bounds a CPU's ratio even where its absolute peaks are estimates from
a VM's base clock. A precision the tables call emulated converts to a wider format and cannot beat fp32.
"""

from __future__ import annotations

from gpudash.knowledge import EMULATED, arch_for, peaks_for
from gpudash.measure.schema import PrecisionTestResult
from gpudash.models import SPEC, DeviceInfo

SPEC_MARGIN = 1.05  # above a datasheet peak by more than this: boost clocks do not explain it
RATIO_MARGIN = 1.3  # above the peaks' ratio by more than this: no kernel does better than the units allow
FLOAT_FORMATS = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4")  # emulated ones run as fp32 at best


def ratio_bound(device: DeviceInfo, precision: str) -> tuple[float, str] | None:
    """(the highest believable speed of `precision` over fp32 on this device, why), or None where no table says."""
    if precision == "fp32":
        return None
    level = arch_for(device).precisions.get(precision)
    if level == EMULATED and precision in FLOAT_FORMATS:
        return RATIO_MARGIN, f"{precision} is emulated here (converted to fp32), so it cannot beat fp32"
    peaks = peaks_for(device)
    own, base = peaks.get(precision), peaks.get("fp32")
    if own is None or base is None or not base.gflops:
        return None
    ratio = own.gflops / base.gflops
    why = f"the peaks allow {ratio:.3g}x ({precision}: {own.basis}; fp32: {base.basis})"
    return ratio * RATIO_MARGIN, why


def above_peak(device: DeviceInfo, precision: str, gflops: float | None) -> str | None:
    """Why `gflops` of `precision` cannot be right on this device (above its datasheet peak), or None."""
    peak = peaks_for(device).get(precision)
    if gflops is None or peak is None or peak.provenance != SPEC or not peak.gflops:
        return None  # estimated peaks are judged the other way round: a measurement proves them low
    if gflops <= peak.gflops * SPEC_MARGIN:
        return None
    return (
        f"implausible: {precision} measured {gflops:,.1f} GFLOPS, above the spec peak {peak.gflops:,.1f} "
        f"({peak.basis}); a measuring error, not remembered"
    )


def beyond_ratio(device: DeviceInfo, precision: str, speed: float | None) -> str | None:
    """Why `speed` (of `precision` over fp32) cannot be right on this device, or None."""
    bound = ratio_bound(device, precision)
    if speed is None or bound is None or speed <= bound[0]:
        return None
    limit, why = bound
    return (
        f"implausible: {precision} measured {speed:.2f}x fp32, beyond the {limit:.2f}x this device can reach "
        f"({why}); a measuring error, not remembered"
    )


def mark_implausible(device: DeviceInfo, records: dict[str, PrecisionTestResult]) -> None:
    """Mark each implausible record: details["implausible_reason"], and reliable False."""
    for precision, record in records.items():
        if not record.supported:
            continue
        why = above_peak(device, precision, record.measured_gflops) or beyond_ratio(
            device, precision, record.speedup_vs_fp32
        )
        if why:
            record.details["implausible_reason"] = why
            record.details["reliable"] = False
