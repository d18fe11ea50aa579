"""Replay: a snapshot file stands in for the whole machine (no live CPU is mixed in)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from gpudash.devices.snapshot_file import read_snapshot
from gpudash.models import DeviceInfo, Host, MigInstance, ProcessUsage, Runtime, Sample, from_dict


def _processes(raw: object) -> list[ProcessUsage] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for entry in raw:
        if isinstance(entry, dict):
            proc = from_dict(ProcessUsage, entry)
            proc.unavailable = dict(entry.get("unavailable") or {})
            out.append(proc)
    return out


def _mig_instances(raw: object) -> list[MigInstance] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for entry in raw:
        if isinstance(entry, dict):
            instance = from_dict(MigInstance, entry)
            instance.processes = _processes(entry.get("processes"))
            instance.unavailable = dict(entry.get("unavailable") or {})
            out.append(instance)
    return out


def _sample(raw: dict) -> Sample:
    sample = from_dict(Sample, raw)
    sample.processes = _processes(raw.get("processes"))
    sample.mig_instances = _mig_instances(raw.get("mig_instances"))
    sample.unavailable = dict(raw.get("unavailable") or {})
    return sample


class ReplayBackend:
    """Devices and a cycling sample stream from a snapshot."""

    name = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        data = read_snapshot(self.path)
        self.data = data
        self.host = from_dict(Host, data["host"])
        self.runtime = from_dict(Runtime, data["runtime"])
        self.runtime.unavailable = dict(data["runtime"].get("unavailable") or {})
        self.origin = data.get("origin") if isinstance(data.get("origin"), str) else None
        self._devices = []
        self._streams = []
        for raw in data["devices"]:
            dev = from_dict(DeviceInfo, {k: v for k, v in raw.items() if k != "samples"})
            dev.sources = ["replay"]
            dev.unavailable = dict(raw.get("unavailable") or {})
            if not isinstance(dev.extra, dict):
                dev.extra = {}
            if isinstance(raw.get("torch"), dict):  # torch's view, when the snapshot recorded it
                dev.extra["torch"] = raw["torch"]
            samples = [_sample(s) for s in raw["samples"]] or [Sample(unavailable={"all": "no samples recorded"})]
            self._devices.append(dev)
            self._streams.append(itertools.cycle(samples))

    def devices(self) -> list[DeviceInfo]:
        return list(self._devices)

    def sample(self, index: int) -> Sample:
        sample = next(self._streams[index])
        # A fresh copy with the replay time, so consumers can treat it like a live reading.
        return Sample(**{**sample.__dict__, "timestamp": time.time(), "unavailable": dict(sample.unavailable)})

    def close(self) -> None:
        pass
