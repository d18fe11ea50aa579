"""What every metric module gets at scrape time: the machine, each device's labels, the remembered results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash.exporter.remembered import Results
from gpudash.models import DeviceInfo, Sample


@dataclass
class Scrape:
    machine: Any  # gpudash.devices.Machine
    hostname: str
    labels: dict[str, dict[str, str]]  # device key -> identity labels
    results: Results
    config: dict[str, Any]
    _samples: dict[str, Sample] = field(default_factory=dict)

    def sample(self, device: DeviceInfo) -> Sample:
        """The device's reading for this scrape, read once however many families use it."""
        if device.key not in self._samples:
            self._samples[device.key] = self.machine.sample(device)
        return self._samples[device.key]

    @property
    def devices(self) -> list[DeviceInfo]:
        return list(self.machine.devices)

    def with_labels(self, device: DeviceInfo | str, **extra: object) -> dict[str, str]:
        key = device if isinstance(device, str) else device.key
        labels = dict(self.labels.get(key, {"hostname": self.hostname, "device_key": key}))
        labels.update({k: str(v) for k, v in extra.items()})
        return labels
