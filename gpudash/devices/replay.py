"""Replay: a snapshot file stands in for the whole machine (no live CPU is mixed in)."""

from __future__ import annotations

import copy
import itertools
import time
from pathlib import Path

from gpudash.devices.snapshot_file import read_machine
from gpudash.models import DeviceInfo, Sample


class ReplayBackend:
    """Devices and a cycling sample stream from a snapshot (checked field by field as it is read)."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        recorded = read_machine(self.path)
        self.host = recorded.host
        self.runtime = recorded.runtime
        self.origin = recorded.origin
        self._devices: list[DeviceInfo] = []
        self._streams = []
        self._health: dict[int, dict] = {}  # index in the device list -> recorded health counters
        for device in recorded.devices:
            dev = device.info
            dev.sources = ["replay"]
            if device.torch is not None:  # torch's view, when the snapshot recorded it
                dev.extra["torch"] = device.torch
            samples = device.samples or [Sample(unavailable={"all": "no samples recorded"})]
            if device.health is not None:
                self._health[len(self._devices)] = device.health
            self._devices.append(dev)
            self._streams.append(itertools.cycle(samples))

    def devices(self) -> list[DeviceInfo]:
        return list(self._devices)

    def sample(self, index: int) -> Sample:
        sample = next(self._streams[index])
        # A fresh copy with the replay time, so consumers can treat it like a live reading.
        return Sample(**{**sample.__dict__, "timestamp": time.time(), "unavailable": dict(sample.unavailable)})

    def has_health(self, index: int) -> bool:
        return index in self._health

    def health(self, index: int) -> dict:
        """The health counters the snapshot recorded (a copy: a judge may not change the replay)."""
        return copy.deepcopy(self._health[index])

    def close(self) -> None:
        pass
