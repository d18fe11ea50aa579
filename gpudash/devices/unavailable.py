"""The vendor adapters' "no such driver here" errors, apart from the adapters.

The dashboard's parent process needs these classes (a contained child's "unavailable" answer is raised as one)
but not the adapters themselves, whose reading modules only the driver's child runs: defined here, the parent
forks the child without importing gpudash.devices.nvidia or gpudash.devices.amd (and ctypes).
"""

from __future__ import annotations


class NvmlUnavailable(Exception):
    """NVML could not start (no driver, no library): the machine simply has no NVIDIA view."""


class AmdSmiUnavailable(Exception):
    """amdsmi is missing or ROCm is not installed."""
