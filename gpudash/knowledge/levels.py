"""Support levels and ArchInfo: the shape of every architecture answer (see the package docstring).

int8 is "native" where int8 GEMMs run on matrix units (tensor cores, MFMA, WMMA). Parts whose only int8 hardware is
a 4-way dot-product instruction (NVIDIA dp4a, AMD v_dot4_i32_i8) are "emulated", and their notes say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gpudash.precisions import PRECISIONS

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
    matrix_unit: str | None = None  # "tensor cores", "MFMA", "WMMA"; None where there are no matrix units
    # precision -> why a spec-only answer should not rely on it (a known software fault, with its citation);
    # a live probe that verifies the precision correct overrides the caution.
    cautions: dict[str, str] = field(default_factory=dict)

    def is_native(self, precision: str) -> bool:
        return self.precisions.get(precision) == NATIVE


def support(**levels: str) -> dict[str, str]:
    """A full precision map: the given levels, every other precision absent. A fresh dict each call."""
    unknown = set(levels) - set(PRECISIONS)
    if unknown:
        raise KeyError(f"not precision names: {sorted(unknown)}")
    return {p: levels.get(p, ABSENT) for p in PRECISIONS}


def unknown_arch(source: str, why: str) -> ArchInfo:
    """Conservative answer for a device we cannot place: only fp32 is claimed; probes tell the rest."""
    return ArchInfo(
        family="unknown",
        precisions=support(fp32=NATIVE),
        fp8_dtype=None,
        fp8_e5m2_dtype=None,
        notes=(why,),
        source=source,
    )


class DeviceFacts(Protocol):
    """What the tables read from a device: gpudash's DeviceInfo and a plugin's Device both fit."""

    @property
    def vendor(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def compute_capability(self) -> str | None: ...
    @property
    def gfx_target(self) -> str | None: ...
    @property
    def multiprocessors(self) -> int | None: ...
    @property
    def max_clock_mhz(self) -> int | None: ...
    @property
    def cpu_features(self) -> Sequence[str]: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...
