"""Architecture facts and theoretical peaks for a Device, from gpudash's reference tables (not measured)."""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.plugins_api.devices import Device


@dataclass(frozen=True)
class Arch:
    """Architecture facts from gpudash's reference tables (not measured)."""

    family: str  # "Hopper", "CDNA3", "RDNA3.5", "Zen 4", "CPU", "unknown"
    precisions: dict[str, str]  # precision name -> "native" | "emulated" | "absent"
    fp8_dtype: str | None  # torch dtype name for fp8 e4m3 here ("float8_e4m3fnuz" on gfx942), None if absent
    fp8_e5m2_dtype: str | None
    notes: tuple[str, ...] = ()

    def is_native(self, precision: str) -> bool:
        return self.precisions.get(precision) == "native"


def arch_of(device: Device) -> Arch:
    """The architecture facts for a device (compute capability, gfx target or CPU features). Never raises."""
    from gpudash.knowledge import arch_for

    info = arch_for(device)
    return Arch(info.family, dict(info.precisions), info.fp8_dtype, info.fp8_e5m2_dtype, tuple(info.notes))


def peak_gflops(device: Device, precision: str) -> float | None:
    """The theoretical dense peak for a precision (GFLOPS; GOPS for int8), None when the tables have none."""
    from gpudash.knowledge import peaks_for

    peak = peaks_for(device).get(precision)
    return peak.gflops if peak else None
