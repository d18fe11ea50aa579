"""Device discovery: every adapter that can answer, merged into one Machine.

`discover()` never raises for a missing driver: the vendor is simply absent and `machine.notes` says
why. torch's view is optional because importing torch takes about a second (the TUI adds it later).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from gpudash.devices.fields import lost_reason
from gpudash.devices.gpu_presence import amd_driver_loaded, installed_torch_runtime, torch_could_see_gpus
from gpudash.devices.machine import Machine, this_host
from gpudash.devices.merge import merge_devices
from gpudash.models import LOST, DeviceInfo, Runtime, Sample

REPLAY_ENV = "GPUDASH_REPLAY"
RUNTIME_LABELS = {"driver": "NVIDIA driver version", "cuda_driver": "CUDA driver version"}


def replay_path(explicit: str | None) -> str | None:
    return explicit or os.environ.get(REPLAY_ENV) or None


def discover(replay: str | None = None, include_torch: bool = True) -> Machine:
    return begin_discovery(replay).machine(include_torch)


class Discovery:
    """Discovery under way. Live, the drivers' children are forked at once and asked to open their library
    and describe its devices; `machine()` reads their answers. A caller with other work to do (the dashboard
    imports Textual) does it in between, while each child loads its vendor library on another core."""

    def __init__(self, replay: str | None = None, read_ahead: tuple[str, ...] = ()) -> None:
        self._replay = replay_path(replay)
        self._cpu: Any = None
        self._notes: list[str] = []
        self._started: list[tuple[str, Any, type[Exception]]] = []
        if not self._replay:
            # The drivers' children first: each is forked before psutil's import and the CPU's description
            # (15-25 ms), which the parent does while they open their libraries on the other core.
            self._started = _start_vendor_backends(self._notes, read_ahead)
            from gpudash.devices.cpu import CpuBackend

            self._cpu = CpuBackend()  # its first CPU-load window runs while the GPUs are described

    def machine(self, include_torch: bool = True) -> Machine:
        """The machine (once: a second call has nothing left to read)."""
        if self._replay:
            return _replayed(self._replay)
        return _live(self._cpu, _opened(self._started, self._notes), self._notes, include_torch)


def begin_discovery(replay: str | None = None, read_ahead: tuple[str, ...] = ()) -> Discovery:
    """Discovery begun; `read_ahead` ("sample", "health"): what each driver's child reads for every device
    as soon as it has described them, for a caller that will ask for it once (gpudash info)."""
    return Discovery(replay, read_ahead)


def _replayed(path: str) -> Machine:
    from gpudash.devices.replay import ReplayBackend

    backend = ReplayBackend(path)
    devices = backend.devices()
    return Machine(
        host=backend.host,
        runtime=backend.runtime,
        devices=devices,
        samplers={d.key: partial(backend.sample, i) for i, d in enumerate(devices)},
        # the recorded health counters, judged as live ones are (gpudash.health)
        health_readers={d.key: partial(backend.health, i) for i, d in enumerate(devices) if backend.has_health(i)},
        replayed=True,
        replay_path=str(path),
        origin=backend.origin,
    )


def _start_vendor_backends(
    notes: list[str], read_ahead: tuple[str, ...] = ()
) -> list[tuple[str, Any, type[Exception]]]:
    """NVML and amdsmi, each in a child process of its own with time limits (gpudash.devices.contained): a
    driver that hangs or crashes costs its devices' readings, never gpudash. Each child is asked to open its
    library without waiting for the answer (`_opened` reads it). The adapters' modules are imported by the
    child that opens them: the parent, which only reads the child's answers, never needs their reading code."""
    from gpudash.devices.contained import contained
    from gpudash.devices.unavailable import AmdSmiUnavailable, NvmlUnavailable

    vendors: list[tuple[str, str, str, type[Exception]]] = [
        ("NVML", "nvml", "gpudash.devices.nvidia:NvmlBackend", NvmlUnavailable),
        ("amdsmi", "amdsmi", "gpudash.devices.amd:AmdSmiBackend", AmdSmiUnavailable),
    ]
    started = []
    for label, name, factory, unavailable in vendors:
        # amdsmi's import alone costs more than the rest of `gpudash info`; without the amdgpu driver it could
        # find nothing anyway. An amdsmi already imported (by a host program, or a test's stand-in) is used.
        if name == "amdsmi" and "amdsmi" not in sys.modules and not amd_driver_loaded():
            notes.append("amdsmi: no AMD GPU driver loaded (no /sys/module/amdgpu)")
            continue
        try:
            backend = contained(name, partial(_open_with, factory), unavailable, wait=False, read_ahead=read_ahead)
            started.append((label, backend, unavailable))
        except unavailable as exc:  # in-process (no fork): the adapter says so at once
            notes.append(f"{label}: {exc}")
    return started


def _opened(started: list[tuple[str, Any, type[Exception]]], notes: list[str]) -> list:
    """The backends whose driver opened; a note for each that did not."""
    opened = []
    for label, backend, unavailable in started:
        try:
            wait_open = getattr(backend, "wait_open", None)  # a contained backend; in-process ones are open
            if wait_open is not None:
                wait_open()
            opened.append(backend)
        except unavailable as exc:
            notes.append(f"{label}: {exc}")
    return opened


def _open_with(factory: str, wrap: Callable[[Any], Any]) -> Any:
    """`factory` ("module:class"), imported where it opens: in the driver's child (in-process without fork)."""
    module, _, name = factory.partition(":")
    return getattr(importlib.import_module(module), name)(wrap=wrap)


def _live(cpu: Any, backends: list, notes: list[str], include_torch: bool) -> Machine:
    vendor_devices: list[DeviceInfo] = []
    samplers: dict[str, Callable[[], Sample]] = {}
    health_readers: dict[str, Callable[[], dict]] = {}
    batch_samplers: list[tuple[Callable[[list[int]], list[Sample]], dict[str, tuple[int, Callable[[], Sample]]]]] = []
    runtime = Runtime()
    for backend in backends:
        try:
            found = backend.devices()
        except Exception as exc:
            notes.append(f"{backend.name}: {exc}")
            continue
        runtime.driver = (
            runtime.driver
            or getattr(backend, "driver_version", None)
            or next((d.driver_version for d in found if d.driver_version), None)
        )
        runtime.cuda_driver = runtime.cuda_driver or getattr(backend, "cuda_driver_version", None)
        for name, why in getattr(backend, "unavailable", {}).items():  # NVML's driver and CUDA driver queries
            runtime.unavailable.setdefault(name, why)
        for dev in found:
            samplers[dev.key] = partial(backend.sample, dev.index)
            if hasattr(backend, "health"):
                health_readers[dev.key] = partial(backend.health, dev.index)
            if dev.status == LOST:  # the text outputs print notes: the reason is seen, not only in JSON
                notes.append(f"{dev.key} is lost: {lost_reason(dev.unavailable.get('device', 'unreachable'))}")
        if hasattr(backend, "samples"):  # a contained backend: one request a round for all its devices
            batch_samplers.append((backend.samples, {dev.key: (dev.index, samplers[dev.key]) for dev in found}))
        vendor_devices.extend(found)
    if runtime.driver:
        runtime.unavailable.pop("driver", None)
    notes.extend(f"{RUNTIME_LABELS.get(name, name)} n/a: {why}" for name, why in runtime.unavailable.items())
    machine = Machine(
        host=this_host(),
        runtime=runtime,
        devices=vendor_devices,
        samplers=samplers,
        health_readers=health_readers,
        notes=notes,
        closers=[b.close for b in backends],
        batch_samplers=batch_samplers,
    )
    if include_torch:
        add_torch_view(machine)
    for dev in cpu.devices():
        machine.devices.append(dev)
        machine.samplers[dev.key] = partial(cpu.sample, dev.index)
    return machine


def add_torch_versions(machine: Machine) -> bool:
    """torch's, CUDA's and HIP's versions as torch's installed files give them, without importing torch;
    False when torch is not installed."""
    installed = installed_torch_runtime()
    if installed is None:
        return False
    machine.runtime.torch, machine.runtime.cuda, machine.runtime.hip = installed.torch, installed.cuda, installed.hip
    return True


def add_torch_view(machine: Machine, torch=None) -> None:
    """Merge torch's GPU view into a live machine (no-op on a replayed one).

    Without a GPU device node (Linux) torch could add no device, so only its versions are read,
    from its files: that saves the second `import torch` costs.
    """
    if machine.replayed:
        return
    if torch is None and not torch_could_see_gpus() and add_torch_versions(machine):
        return
    from gpudash.devices.torch_view import TorchView

    try:
        view = TorchView(torch)
    except Exception as exc:  # torch missing or broken: the vendor view still stands
        machine.notes.append(f"torch: {exc}")
        return
    machine.runtime.torch = view.runtime.torch
    machine.runtime.cuda = view.runtime.cuda
    machine.runtime.hip = view.runtime.hip
    gpus = [d for d in machine.devices if d.vendor != "cpu"]
    others = [d for d in machine.devices if d.vendor == "cpu"]
    hidden = {d.key for d in machine.hidden}
    # Hidden GPUs take part in the matching, so torch's view of them is not taken for new devices.
    merged = merge_devices(gpus + [d for d in machine.hidden if d.vendor != "cpu"], view.devices())
    for dev in merged:
        # A torch-only device (it always has a torch index): memory is all torch can tell live.
        if dev.key not in machine.samplers and dev.torch_index is not None:
            machine.samplers[dev.key] = partial(_torch_sample, view.torch, dev.torch_index)
    if hidden:  # a device filter is on: it shows the devices it kept, and no torch-only newcomer
        shown = {d.key for d in gpus}
        machine.hidden = [d for d in merged if d.key in hidden] + [d for d in machine.hidden if d.vendor == "cpu"]
        merged = [d for d in merged if d.key in shown]
    machine.devices = merged + others


def _torch_sample(torch, index: int) -> Sample:
    free, total = torch.cuda.mem_get_info(index)
    reason = "vendor library (NVML/amdsmi) unavailable; torch reports memory only"
    return Sample(
        memory_used_bytes=total - free,
        memory_total_bytes=total,
        unavailable={k: reason for k in ("utilization_pct", "temperature_c", "power_w", "sm_clock_mhz")},
    )


__all__ = [
    "REPLAY_ENV",
    "Discovery",
    "Machine",
    "add_torch_view",
    "begin_discovery",
    "discover",
    "replay_path",
    "torch_could_see_gpus",
]
