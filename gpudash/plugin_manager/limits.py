"""The resource limits a plugin's check or benchmark runs under, from the config's [plugins] table.

Address space (RLIMIT_AS) bounds the memory a plugin can take: without it, a check that allocated 4 GB
reached 8.2 GB in its child. CUDA and ROCm reserve virtual address space for the devices' memory when they
start, far beyond what the process uses (NVIDIA's own libraries fail under `ulimit -v 16777216`, 16 GiB:
Netflix/vmaf#1381, CUDA_ERROR_OUT_OF_MEMORY), so on an NVIDIA or AMD device the limit applies only when the
config says `address_space_on_gpu = true`. CPU time (RLIMIT_CPU) applies on every device.
"""

from __future__ import annotations

from typing import Any

from gpudash.measure.limits import ChildLimits


def limits_for(settings: dict[str, Any], vendor: str) -> ChildLimits:
    """The limits of a child that runs plugin code for a device of `vendor` ("cpu", "nvidia", "amd")."""
    address_space = int(settings.get("address_space_mib") or 0)
    if vendor != "cpu" and not settings.get("address_space_on_gpu"):
        address_space = 0
    return ChildLimits(address_space, int(settings.get("cpu_time_s") or 0))


def default_settings() -> dict[str, Any]:
    """The [plugins] table as shipped, for callers that hold no config."""
    from gpudash.config import defaults

    return defaults()["plugins"]
