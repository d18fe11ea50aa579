"""arch_for: the architecture facts for one device, dispatched on its vendor to the vendor tables."""

from __future__ import annotations

from gpudash.knowledge.cpu import cpu_arch
from gpudash.knowledge.levels import ArchInfo, DeviceFacts, unknown_arch


def arch_for(device: DeviceFacts) -> ArchInfo:
    """The architecture facts for one device, dispatched on its vendor. Never raises. A vendor's table is
    imported by the first lookup of one of its devices: the dashboard of an NVIDIA machine never loads AMD's."""
    try:
        vendor = (getattr(device, "vendor", None) or "").lower()
        name = getattr(device, "name", None)
        name = name if isinstance(name, str) else None  # the name settles chips one cc/gfx covers (TU116 vs TU106)
        if vendor == "nvidia":
            from gpudash.knowledge.nvidia import nvidia_arch

            return nvidia_arch(getattr(device, "compute_capability", None), name)
        if vendor == "amd":
            from gpudash.knowledge.amd import amd_arch

            return amd_arch(getattr(device, "gfx_target", None), name)
        if vendor == "cpu":
            return cpu_arch(device)
        return unknown_arch("", f"unknown vendor {vendor!r}")
    except Exception as exc:  # a table bug must not take the dashboard down
        return unknown_arch("", f"architecture lookup failed: {exc}")
