"""Architecture knowledge: what a device is, which precisions its hardware has, and its theoretical peaks.

Pure data and small functions: nothing here imports torch, Textual or a vendor binding, so the tables
can be shown instantly and tested anywhere. Every table cites the public vendor source (URL) of its facts.

Support levels:
  native   - the hardware has it (tensor/matrix cores or native vector instructions), per the spec tables
  emulated - it runs, but through conversion or a slow reference path
  absent   - it does not run / is not available
A native precision may still be slow (fp64 on GeForce, fp16 on consumer Pascal); `notes` says so.
`cautions` names precisions the hardware has but a known software fault makes a spec-only answer unsafe for.
A device name that covers several products is reported as ambiguous (peaks.match_parts, Peak.candidates).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash.knowledge.arch import arch_for
from gpudash.knowledge.cpu import cpu_arch
from gpudash.knowledge.levels import ABSENT, EMULATED, NATIVE, SUPPORT_LEVELS, ArchInfo

# The peak tables are large and only benchmarks and exports read them: loaded on first use, so looking up an
# architecture (every `gpudash info`) does not pay for them. A vendor's table is loaded by the first lookup of
# one of its devices (arch_for), so a machine without AMD GPUs never loads AMD's, nor one without NVIDIA's theirs.
if TYPE_CHECKING:
    from gpudash.knowledge.amd import amd_arch
    from gpudash.knowledge.nvidia import nvidia_arch
    from gpudash.knowledge.peaks import (
        PartMatch,
        Peak,
        match_parts,
        peak_candidates,
        peak_memory_bandwidth_gbps,
        peaks_for,
    )

_PEAK_NAMES = ("PartMatch", "Peak", "match_parts", "peak_candidates", "peak_memory_bandwidth_gbps", "peaks_for")


def __getattr__(name: str):
    if name in _PEAK_NAMES:
        from gpudash.knowledge import peaks

        return getattr(peaks, name)
    if name == "amd_arch":
        from gpudash.knowledge.amd import amd_arch

        return amd_arch
    if name == "nvidia_arch":
        from gpudash.knowledge.nvidia import nvidia_arch

        return nvidia_arch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ABSENT",
    "EMULATED",
    "NATIVE",
    "SUPPORT_LEVELS",
    "ArchInfo",
    "PartMatch",
    "Peak",
    "amd_arch",
    "arch_for",
    "cpu_arch",
    "match_parts",
    "nvidia_arch",
    "peak_candidates",
    "peak_memory_bandwidth_gbps",
    "peaks_for",
]
