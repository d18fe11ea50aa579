"""PyTorch's own view of the GPUs (CUDA or ROCm build): what training code will actually see.

Imported only when asked for: `import torch` costs about a second, so the TUI loads it in the
background and `gpudash --help` never does.
"""

from __future__ import annotations

import importlib

from gpudash.devices.fields import error_reason, read_field
from gpudash.devices.target_id import split_target_id
from gpudash.models import DeviceInfo, Runtime


def load_torch():
    return importlib.import_module("torch")


def runtime(torch) -> Runtime:
    version = getattr(torch, "version", None)
    return Runtime(
        torch=getattr(torch, "__version__", None),
        cuda=getattr(version, "cuda", None),
        hip=getattr(version, "hip", None),
    )


def _precision_view(torch, index: int, missing: dict[str, str]) -> dict[str, bool | None]:
    """What torch claims per precision; ROCm builds claim bf16 everywhere (torch.cuda.is_bf16_supported is True on any ROCm build)."""
    cuda = torch.cuda
    with_device = getattr(cuda, "device", None)

    def bf16_native():
        if with_device is not None:
            with with_device(index):
                return bool(cuda.is_bf16_supported(including_emulation=False))
        return bool(cuda.is_bf16_supported(including_emulation=False))

    view = {"bf16": read_field(missing, "torch_bf16", bf16_native)}
    tf32 = getattr(cuda, "is_tf32_supported", None)
    view["tf32"] = read_field(missing, "torch_tf32", lambda: bool(tf32())) if tf32 else None
    return view


class TorchView:
    """GPUs as torch.cuda enumerates them (HIP devices included on ROCm builds)."""

    name = "torch"

    def __init__(self, torch=None) -> None:
        self.torch = torch if torch is not None else load_torch()
        self.runtime = runtime(self.torch)

    def devices(self) -> list[DeviceInfo]:
        torch = self.torch
        try:
            if not torch.cuda.is_available():
                return []
            count = torch.cuda.device_count()
        except Exception:
            return []
        vendor = "amd" if self.runtime.hip else "nvidia"
        return [self._describe(vendor, i) for i in range(count)]

    def _describe(self, vendor: str, index: int) -> DeviceInfo:
        missing: dict[str, str] = {}
        try:
            props = self.torch.cuda.get_device_properties(index)
        except Exception as exc:
            return DeviceInfo(
                vendor=vendor,
                index=index,
                name=f"torch device {index}",
                torch_index=index,
                sources=["torch"],
                unavailable={"device": error_reason(exc)},
            )
        gcn = getattr(props, "gcnArchName", "") or ""
        target, flags = split_target_id(gcn)  # "gfx906:sramecc+:xnack-": the processor, and its flags as facts
        uuid = str(getattr(props, "uuid", "") or "") or None
        bus = getattr(props, "pci_bus_id", None)
        domain = getattr(props, "pci_domain_id", 0) or 0
        device = getattr(props, "pci_device_id", 0) or 0
        clock_khz = getattr(props, "clock_rate", 0) or 0
        return DeviceInfo(
            vendor=vendor,
            index=index,
            name=props.name,
            uuid=uuid,
            pci_bus_id=f"{domain:08x}:{bus:02x}:{device:02x}.0" if isinstance(bus, int) else None,
            compute_capability=None if vendor == "amd" else f"{props.major}.{props.minor}",
            gfx_target=target or None if vendor == "amd" else None,
            memory_total_bytes=props.total_memory,
            multiprocessors=props.multi_processor_count,
            max_clock_mhz=clock_khz // 1000 or None,
            torch_index=index,
            sources=["torch"],
            unavailable=missing,
            extra={
                "torch": _precision_view(self.torch, index, missing),
                "gcnArchName": gcn or None,
                **({"gfx_features": flags} if flags and vendor == "amd" else {}),
            },
        )
