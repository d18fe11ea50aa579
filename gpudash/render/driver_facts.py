"""The driver facts the dashboard's first screen gives: driver version, CUDA driver version, compute mode.

nvitop and nvidia-smi print the driver and the newest CUDA the driver supports above the GPUs, and each GPU's
compute mode beside it; gpudash gives them as parts of the host line, each a (title, text) pair so the line
can leave whole parts out where it is too narrow (gpudash.render.column_fit). A fact no driver reported is
left out rather than shown as a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render.formatting import index_runs


def driver_version(devices: Sequence[DeviceInfo], runtime: Runtime) -> str | None:
    """The GPU driver's version: NVML's (or amdsmi's) from the devices, else the runtime's."""
    found = [d.driver_version for d in devices if d.vendor != "cpu" and d.driver_version]
    return found[0] if found else runtime.driver


def compute_modes(devices: Sequence[DeviceInfo], samples: Mapping[str, Sample]) -> str | None:
    """ "default" when every NVIDIA GPU that reported one is in the same mode, else each mode with its GPU
    indices ("default 0-5, exclusive_process 6,7"); None where no GPU reported a compute mode."""
    by_mode: dict[str, list[int]] = {}
    for device in devices:
        sample = samples.get(device.key)
        if device.vendor == "nvidia" and sample is not None and sample.compute_mode:
            by_mode.setdefault(sample.compute_mode, []).append(device.index)
    if not by_mode:
        return None
    if len(by_mode) == 1:
        return next(iter(by_mode))
    return ", ".join(f"{mode} {index_runs(indices)}" for mode, indices in by_mode.items())


def driver_parts(
    devices: Sequence[DeviceInfo], runtime: Runtime, samples: Mapping[str, Sample]
) -> list[tuple[str, str]]:
    """(title, text) for each driver fact known: ("driver", "driver 550.54.15"), ("CUDA", "CUDA 12.4"),
    ("compute", "compute default"). The titles are the names the host line's drop order uses."""
    parts: list[tuple[str, str]] = []
    driver = driver_version(devices, runtime)
    if driver and any(d.vendor != "cpu" for d in devices):
        parts.append(("driver", f"driver {driver}"))
    if runtime.cuda_driver and any(d.vendor == "nvidia" for d in devices):
        parts.append(("CUDA", f"CUDA {runtime.cuda_driver}"))
    modes = compute_modes(devices, samples)
    if modes:
        parts.append(("compute", f"compute {modes}"))
    return parts
