"""The names a device goes by: what a user types (`--device`) and what torch calls it.

Probes, benchmarks, checks and `gpudash export` all pick devices the same way (gpudash.devices.selection),
so `--device` means the same everywhere.
"""

from __future__ import annotations

from gpudash.devices.selection import find_device, find_devices
from gpudash.models import DeviceInfo


def torch_device(device: DeviceInfo) -> str | None:
    """The torch device string for a gpudash device ("cpu", "cuda:N"), or None when torch cannot see it."""
    if device.vendor == "cpu":
        return "cpu"
    if device.torch_index is not None:
        return f"cuda:{device.torch_index}"  # ROCm builds call AMD GPUs cuda:N too
    return None


__all__ = ["find_device", "find_devices", "torch_device"]
