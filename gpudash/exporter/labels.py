"""The identity labels of a device: the vendor exporters' names, so PromQL joins gpudash with them.

dcgm-exporter labels NVIDIA GPUs `gpu` (NVML index), `UUID`, `pci_bus_id`, `modelName`; AMD's
device-metrics-exporter labels `gpu_id`, `serial_number`, `card_model`. Both add the host name, which
gpudash writes as lower-case `hostname` (dcgm-exporter is moving from `Hostname` to it). `device_key` is
gpudash's own key ("nvidia:0", "cpu:0"), the only identity the CPU has.
"""

from __future__ import annotations

from gpudash.models import DeviceInfo

IDENTITY = (
    "hostname",
    "device_key",
    "vendor",
    "gpu",
    "UUID",
    "pci_bus_id",
    "modelName",
    "gpu_id",
    "serial_number",
    "card_model",
)


def serial_number(device: DeviceInfo) -> str | None:
    """The board serial when the device layer read one (amdsmi's asic serial); else None."""
    value = device.extra.get("serial_number") if isinstance(device.extra, dict) else None
    return str(value) if value not in (None, "", "N/A") else None


def identity(device: DeviceInfo, hostname: str) -> dict[str, str]:
    labels = {"hostname": hostname, "device_key": device.key, "vendor": device.vendor}
    if device.vendor == "nvidia":
        labels |= {"gpu": str(device.index), "modelName": device.name}
    elif device.vendor == "amd":
        labels |= {"gpu_id": str(device.index), "card_model": device.name, "serial_number": serial_number(device) or ""}
    if device.vendor != "cpu":
        labels |= {"UUID": device.uuid or "", "pci_bus_id": device.pci_bus_id or ""}
    return {k: v for k, v in labels.items() if v}
