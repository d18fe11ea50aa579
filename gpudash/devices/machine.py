"""A Machine: the merged device list plus a way to sample each device, live or replayed."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from gpudash.models import DeviceInfo, Host, Runtime, Sample


def this_host() -> Host:
    uname = getattr(os, "uname", None)
    if uname is not None:  # what socket.gethostname() and platform give there, without importing them
        names = uname()
        return Host(hostname=names.nodename, machine=names.machine, os=names.sysname)
    import platform  # Windows
    import socket

    return Host(hostname=socket.gethostname(), machine=platform.machine(), os=platform.system())


@dataclass
class Machine:
    host: Host
    runtime: Runtime
    devices: list[DeviceInfo]
    samplers: dict[str, Callable[[], Sample]] = field(default_factory=dict)  # device.key -> read one sample
    # device.key -> read its health counters ({"counters", "unavailable"}; gpudash.devices.nvml_health)
    health_readers: dict[str, Callable[[], dict]] = field(default_factory=dict)
    replayed: bool = False
    replay_path: str | None = None
    origin: str | None = None  # a snapshot's note on where its data came from
    notes: list[str] = field(default_factory=list)  # why a source is missing ("NVML: LibraryNotFound")
    closers: list[Callable[[], None]] = field(default_factory=list)
    # Devices left out by --only or --only-visible (gpudash.devices.selection): never sampled or shown, kept
    # so that torch's view, merged later, recognises them instead of adding them back as torch-only devices.
    hidden: list[DeviceInfo] = field(default_factory=list)
    # Readers of several devices at once (a driver's child asked once a round): (read(indices) -> samples,
    # device key -> (index, its sampler)); sample_all uses one for the devices whose sampler is still that one.
    batch_samplers: list[tuple[Callable[[list[int]], list[Sample]], dict[str, tuple[int, Callable[[], Sample]]]]] = (
        field(default_factory=list)
    )

    @property
    def label(self) -> str:
        """How every output names the data it shows."""
        if not self.replayed:
            return "live"
        name = os.path.basename(self.replay_path or "snapshot")
        return f"replayed from {name}" + (f" ({self.origin})" if self.origin else "")

    def sample(self, device: DeviceInfo) -> Sample:
        reader = self.samplers.get(device.key)
        if reader is None:
            return Sample(unavailable={"all": "no live source for this device"})
        try:
            return reader()
        except Exception as exc:  # a driver failing mid-run costs one reading, not the dashboard
            return Sample(unavailable={"all": f"sampling failed: {exc}"})

    def sample_all(self) -> dict[str, Sample]:
        read: dict[str, Sample] = {}
        for read_many, covered in self.batch_samplers:
            keys = [d.key for d in self.devices if d.key in covered and self.samplers.get(d.key) is covered[d.key][1]]
            if len(keys) > 1:
                try:
                    read.update(zip(keys, read_many([covered[k][0] for k in keys])))
                except Exception as exc:  # as sample(): a driver failing mid-run costs its readings
                    read.update((k, Sample(unavailable={"all": f"sampling failed: {exc}"})) for k in keys)
        return {dev.key: read[dev.key] if dev.key in read else self.sample(dev) for dev in self.devices}

    def close(self) -> None:
        for close in self.closers:
            close()
        self.closers.clear()
