"""Devices as a plugin sees them: the Device record, and `local_device` for a torch device of this process."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpudash.plugins_api.plain_data import PlainData


@dataclass
class Device(PlainData):
    """What a plugin is told about one device: plain data, the same in the child process as in gpudash."""

    vendor: str  # "nvidia" | "amd" | "cpu"
    index: int
    name: str
    compute_capability: str | None = None  # "9.0" (NVIDIA)
    gfx_target: str | None = None  # "gfx942" (AMD)
    torch_index: int | None = None  # the torch.cuda ordinal; None for the CPU or when torch does not see it
    memory_total_bytes: int | None = None
    multiprocessors: int | None = None  # SMs, CUs, or physical cores
    max_clock_mhz: int | None = None
    cpu_features: list[str] = field(default_factory=list)  # CPU only, torch.cpu.get_capabilities() names
    runtime: dict[str, str | None] = field(default_factory=dict)  # torch, cuda, hip, driver versions
    replayed: bool = False  # a snapshot, not this machine: run nothing on it
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.vendor}:{self.index}"

    @property
    def torch_device(self) -> str | None:
        """The torch device string to run on ("cpu", "cuda:0"; ROCm devices are "cuda" too), or None."""
        if self.vendor == "cpu":
            return "cpu"
        return None if self.torch_index is None else f"cuda:{self.torch_index}"

    @property
    def rocm_version(self) -> tuple[int, int] | None:
        """(major, minor) of the HIP runtime ("7.1.25424" -> (7, 1)), None when unknown or not ROCm."""
        match = re.match(r"\s*(\d+)\.(\d+)", str(self.runtime.get("hip") or ""))
        return (int(match.group(1)), int(match.group(2))) if match else None


def local_device(torch_device: Any = "cpu") -> Device:
    """Describe a torch device of *this* process (imports torch): what a dispatcher needs to choose a kernel."""
    import torch

    dev = torch.device(torch_device)
    runtime = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None)}
    if dev.type == "cpu":
        from gpudash.devices.cpu import CpuBackend

        info = CpuBackend().devices()[0]
        return Device(
            "cpu",
            0,
            info.name,
            multiprocessors=info.multiprocessors,
            max_clock_mhz=info.max_clock_mhz,
            memory_total_bytes=info.memory_total_bytes,
            cpu_features=list(info.cpu_features),
            runtime=runtime,
            extra=dict(info.extra),
        )
    if dev.type == "cuda":
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        if runtime["hip"]:
            vendor, cc = "amd", None
            gfx = (getattr(props, "gcnArchName", "") or "").split(":")[0] or None
        else:
            vendor, cc, gfx = "nvidia", f"{props.major}.{props.minor}", None
        return Device(
            vendor,
            index,
            props.name,
            compute_capability=cc,
            gfx_target=gfx,
            torch_index=index,
            memory_total_bytes=props.total_memory,
            multiprocessors=props.multi_processor_count,
            runtime=runtime,
        )
    raise ValueError(f"no architecture facts for torch device type {dev.type!r}")
