"""Architecture knowledge: what a device is, which precisions its hardware has, and its theoretical peaks.

Pure data and small functions: nothing here imports torch, Textual or a vendor binding, so the tables
can be shown instantly and tested anywhere. Facts and their sources are in shared/reference/precision.md
(sections 2.3, 3.1 and 6); each table cites the section it encodes.

Support levels:
  native   - the hardware has it (tensor/matrix cores or native vector instructions), per the spec tables
  emulated - it runs, but through conversion or a slow reference path
  absent   - it does not run / is not available
A native precision may still be slow (fp64 on GeForce, fp16 on consumer Pascal); `notes` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudash.precisions import PRECISIONS

if TYPE_CHECKING:
    from gpudash.models import DeviceInfo

SUPPORT_LEVELS = ("native", "emulated", "absent")
NATIVE, EMULATED, ABSENT = SUPPORT_LEVELS


@dataclass(frozen=True)
class ArchInfo:
    family: str  # "Hopper", "CDNA3", "RDNA3.5", "Zen 4", "CPU", "unknown", ...
    precisions: dict[str, str]  # every name in PRECISIONS -> a SUPPORT_LEVELS entry
    fp8_dtype: str | None  # torch dtype name for e4m3 here, None where fp8 is absent
    fp8_e5m2_dtype: str | None
    notes: tuple[str, ...] = ()
    source: str = ""

    def is_native(self, precision: str) -> bool:
        return self.precisions.get(precision) == NATIVE


def _support(**levels: str) -> dict[str, str]:
    """A full precision map: the given levels, every other precision absent. A fresh dict each call."""
    unknown = set(levels) - set(PRECISIONS)
    if unknown:
        raise KeyError(f"not precision names: {sorted(unknown)}")
    return {p: levels.get(p, ABSENT) for p in PRECISIONS}


def _unknown(source: str, why: str) -> ArchInfo:
    """Conservative answer for a device we cannot place: only fp32 is claimed; probes tell the rest."""
    return ArchInfo(
        family="unknown",
        precisions=_support(fp32=NATIVE),
        fp8_dtype=None,
        fp8_e5m2_dtype=None,
        notes=(why,),
        source=source,
    )


# Submodules import ArchInfo and the helpers above, so they are imported after them.
from gpudash.knowledge.amd import amd_arch  # noqa: E402
from gpudash.knowledge.cpu import cpu_arch  # noqa: E402
from gpudash.knowledge.nvidia import nvidia_arch  # noqa: E402


def arch_for(device: DeviceInfo) -> ArchInfo:
    """The architecture facts for one device, dispatched on its vendor. Never raises."""
    try:
        vendor = (getattr(device, "vendor", None) or "").lower()
        if vendor == "nvidia":
            return nvidia_arch(getattr(device, "compute_capability", None))
        if vendor == "amd":
            return amd_arch(getattr(device, "gfx_target", None))
        if vendor == "cpu":
            return cpu_arch(device)
        return _unknown("", f"unknown vendor {vendor!r}")
    except Exception as exc:  # a table bug must not take the dashboard down
        return _unknown("", f"architecture lookup failed: {exc}")


from gpudash.knowledge.peaks import Peak, peak_memory_bandwidth_gbps, peaks_for  # noqa: E402

__all__ = [
    "SUPPORT_LEVELS",
    "ArchInfo",
    "Peak",
    "amd_arch",
    "arch_for",
    "cpu_arch",
    "nvidia_arch",
    "peak_memory_bandwidth_gbps",
    "peaks_for",
]
