"""What every metric module gets at scrape time: the machine, each device's labels, the remembered results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpudash.exporter.remembered import Results
from gpudash.models import DeviceInfo


@dataclass
class Scrape:
    machine: Any  # gpudash.devices.Machine
    hostname: str
    labels: dict[str, dict[str, str]]  # device key -> identity labels
    results: Results
    config: dict[str, Any]

    @property
    def devices(self) -> list[DeviceInfo]:
        return list(self.machine.devices)

    def with_labels(self, device: DeviceInfo | str, **extra: object) -> dict[str, str]:
        key = device if isinstance(device, str) else device.key
        labels = dict(self.labels.get(key, {"hostname": self.hostname, "device_key": key}))
        labels.update({k: str(v) for k, v in extra.items()})
        return labels
