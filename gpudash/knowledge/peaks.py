"""Theoretical peaks (dense, no sparsity): a named-parts table, a per-family formula, and a CPU formula.

Order of trust: a named part's datasheet figure (provenance "spec") beats the formula (provenance "estimated"),
because the driver-reported max clock is not the clock vendors compute peaks with (H100 SXM reports 1980 MHz,
its tensor peak uses 1830 MHz, as the ml-engineering spec table notes). The formula only fills precisions the part entry
lacks, and only for precisions the architecture has natively (an emulated path has no meaningful peak).
Units: GFLOPS; int8 in GOPS. For memory bandwidth, `Peak.gflops` holds GB/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpudash.knowledge.arch import arch_for
from gpudash.knowledge.cpu import features, microarch, vendor_of
from gpudash.knowledge.levels import NATIVE, DeviceFacts
from gpudash.knowledge.peak_tables import AMD_RATES, GEFORCE_HALVED, NV_RATES, PARTS, Part
from gpudash.precisions import PRECISIONS

SPEC, ESTIMATED = "spec", "estimated"


@dataclass(frozen=True)
class Peak:
    gflops: float  # dense, no sparsity; int8 in GOPS (GB/s for memory bandwidth)
    provenance: str  # "spec" or "estimated"
    basis: str


_VM_CLOCK = "VMs often report the base clock, so turbo can exceed it"


def _ordered(peaks: dict[str, Peak]) -> dict[str, Peak]:
    """Display order of the precision contract."""
    return {p: peaks[p] for p in PRECISIONS if p in peaks}


def _tokens(name: object) -> set[str]:
    return set(re.sub(r"[^a-z0-9]+", " ", str(name or "").lower()).split())


def _part_for(device: DeviceFacts) -> Part | None:
    vendor = (getattr(device, "vendor", None) or "").lower()
    tokens = _tokens(getattr(device, "name", ""))
    for part in PARTS:
        if part.vendor == vendor and all(t in tokens for t in part.needs) and not tokens & set(part.avoid):
            return part
    return None


def _positive_int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _gpu_formula(device: DeviceFacts, native: set[str]) -> dict[str, Peak]:
    units = _positive_int(getattr(device, "multiprocessors", None))
    mhz = _positive_int(getattr(device, "max_clock_mhz", None))
    if units is None or mhz is None:
        return {}
    vendor = (device.vendor or "").lower()
    halved: tuple[str, ...] = ()
    if vendor == "nvidia":
        from gpudash.knowledge.nvidia import parse_cc

        cc = parse_cc(device.compute_capability)
        rates = NV_RATES.get(cc, {}) if cc else {}
        unit, label = "SM", f"cc {cc[0]}.{cc[1]}" if cc else "?"
        if cc in GEFORCE_HALVED and _tokens(device.name) & {"geforce", "titan"}:
            halved = GEFORCE_HALVED[cc]
    else:
        label = arch_for(device).family
        rates, unit = AMD_RATES.get(label, {}), "CU"
    out = {}
    for precision, rate in rates.items():
        if precision not in native:
            continue
        why = ""
        if precision in halved:
            rate //= 2
            why = ", GeForce fp32-accumulate half rate"
        out[precision] = Peak(
            gflops=units * mhz * rate / 1000.0,
            provenance=ESTIMATED,
            basis=f"formula: {units} {unit}s x {mhz} MHz x {rate} FLOP/clk/{unit} ({label}{why}); "
            "the driver's max clock may differ from the clock vendors quote",
        )
    return out


def _cpu_fp32_rate(device: DeviceFacts, feats: frozenset[str]) -> tuple[int, str] | None:
    """FP32 FLOP/cycle/core and why, or None when the ISA says nothing we can rate."""
    if "avx512_f" in feats:
        arch = microarch(device)
        if arch == "Zen 5":
            return 64, "AVX-512 on Zen 5, 2x512-bit FMA (mobile Zen 5 runs 256-bit: half)"
        if vendor_of(device) == "amd":  # Zen 4 executes AVX-512 on 2x256-bit units
            return 32, f"AVX-512 on {arch if arch != 'CPU' else 'AMD'}, 2x256-bit FMA"
        return 64, "AVX-512 with 2 FMA ports (some SKUs have 1: half)"
    if "avx2" in feats and "fma3" in feats:
        return 32, "AVX2 + FMA, 2 ports"
    return None


def _cpu_peaks(device: DeviceFacts) -> dict[str, Peak]:
    cores = _positive_int(getattr(device, "multiprocessors", None))
    what = "physical cores"
    if cores is None:
        cores, what = _positive_int(getattr(device, "logical_cores", None)), "logical cores (SMT may double count)"
    mhz = _positive_int(getattr(device, "max_clock_mhz", None))
    feats = features(device)
    fp32 = _cpu_fp32_rate(device, feats)
    if cores is None or mhz is None or fp32 is None:
        return {}
    rate32, why32 = fp32
    rates: dict[str, tuple[int, str]] = {"fp32": (rate32, why32), "fp64": (rate32 // 2, why32)}
    if "amx_bf16" in feats:
        rates["bf16"] = (1024, "AMX-BF16 per core")
    elif "avx512_bf16" in feats:
        rates["bf16"] = (2 * rate32, "AVX512-BF16, 2x the fp32 rate")
    if "amx_fp16" in feats:
        rates["fp16"] = (1024, "AMX-FP16 per core")
    elif "avx512_fp16" in feats:
        rates["fp16"] = (2 * rate32, "AVX512-FP16, 2x the fp32 rate")
    if "amx_int8" in feats:
        rates["int8"] = (2048, "AMX-INT8 per core")
    elif "avx512_vnni" in feats and "avx512_f" in feats:
        rates["int8"] = (4 * rate32, "AVX512-VNNI, 4x the fp32 rate")
    elif "avx_vnni" in feats:
        rates["int8"] = (4 * 32, "AVX-VNNI (256-bit), 4x the AVX2 fp32 rate")
    return _ordered(
        {
            p: Peak(
                gflops=cores * mhz * rate / 1000.0,
                provenance=ESTIMATED,
                basis=f"formula: {cores} {what} x {mhz} MHz x {rate} FLOP/cycle ({why}); {_VM_CLOCK}",
            )
            for p, (rate, why) in rates.items()
        }
    )


def peaks_for(device: DeviceFacts) -> dict[str, Peak]:
    """Precision -> theoretical peak, for the precisions we can say something about. Never raises."""
    try:
        vendor = (getattr(device, "vendor", None) or "").lower()
        if vendor == "cpu":
            return _cpu_peaks(device)
        if vendor not in ("nvidia", "amd"):
            return {}
        arch = arch_for(device)
        native = {p for p, level in arch.precisions.items() if level == NATIVE}
        out = _gpu_formula(device, native)
        part = _part_for(device)
        if part is not None:
            for precision, tflops in part.tflops.items():
                out[precision] = Peak(tflops * 1000.0, SPEC, f"{part.label} spec ({part.source})")
        return _ordered(out)
    except Exception:
        return {}


def peak_memory_bandwidth_gbps(device: DeviceFacts) -> Peak | None:
    """Spec memory bandwidth (GB/s, in `gflops`) for the named parts we know, else None. Never raises."""
    try:
        part = _part_for(device)
        if part is None or part.bandwidth_gbs is None:
            return None
        return Peak(part.bandwidth_gbs, SPEC, f"{part.label} spec ({part.source})")
    except Exception:
        return None
