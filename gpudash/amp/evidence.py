"""What gpudash.amp decides from: one device of a machine, as facts for the recommender's decisions.

The machine is the live one, the one GPUDASH_REPLAY names, an explicit snapshot path, or a Machine given by the
caller; the facts come from gpudash.recommend.machine_facts, the same builder `gpudash export` uses, with what
probe, bench and export remembered for that device. A replayed machine was never measured: its facts are spec.
A plugin's Device (the adaptive dispatcher, the ROCm checks) is described by its own fields; a live one is
matched to this machine's device to read what was remembered for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from gpudash.errors import GpudashError
from gpudash.models import DeviceInfo, Runtime


def _torch():
    import torch

    return torch


@dataclass
class Evidence:
    torch_device: str  # "cpu" | "cuda:N" (ROCm GPUs are cuda:N too)
    device: DeviceInfo
    facts: Any  # gpudash.recommend.Facts: what every decision reads
    replayed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.device.key} ({self.device.name})"

    @property
    def is_cpu(self) -> bool:
        return self.device.vendor == "cpu"

    def result(self, precision: str):
        """The remembered probe result for `precision`, or None."""
        return self.facts.probe_result(precision)


def resolve_device(device: Any = None) -> str:
    """None, an int, "cpu", "cuda", "cuda:N" or a torch.device -> "cpu" or "cuda:N" on this machine's torch."""
    torch = _torch()
    if device is None:
        return f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        return f"cuda:{device}"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise GpudashError(f"device {device!r}: {exc}") from None
    if dev.type == "cpu":
        return "cpu"
    if dev.type == "cuda":
        return f"cuda:{dev.index if dev.index is not None else torch.cuda.current_device()}"
    raise GpudashError(f"device {device!r}: gpudash.amp knows cpu and cuda devices (ROCm GPUs are cuda too)")


def is_plugin_device(device: Any) -> bool:
    """A gpudash.plugins_api.Device (duck-typed: importing the plugin API is not needed to recognise one)."""
    return all(hasattr(device, a) for a in ("vendor", "index", "name", "replayed", "runtime", "torch_device"))


def _machine(machine: Any, notes: list[str]):
    """The machine to answer for: a Machine, a snapshot path, or None (live, or GPUDASH_REPLAY)."""
    from gpudash.devices import REPLAY_ENV, Machine, discover

    if isinstance(machine, Machine):
        return machine
    if machine is not None:
        return discover(replay=os.fspath(machine))  # a bad snapshot is the user's error: one line, raised
    if os.environ.get(REPLAY_ENV):
        machine = discover()
        notes.append(f"{REPLAY_ENV} is set: answering for {machine.label}")
        return machine
    try:
        return discover(include_torch=True)
    except Exception as exc:  # a broken driver costs the remembered results, not the answer
        notes.append(f"device discovery failed: {exc}")
        return None


def _selector(machine, device: Any) -> str:
    """What find_device should look for on `machine`."""
    if isinstance(device, DeviceInfo):
        return device.key
    if machine.replayed:
        if device is None:
            gpus = [d for d in machine.devices if d.vendor != "cpu"]
            return (gpus or machine.devices)[0].key
        if isinstance(device, int) and not isinstance(device, bool):
            return f"cuda:{device}"
        text = str(device).strip().lower()
        return "cuda:0" if text == "cuda" else text
    text = str(device).strip().lower() if isinstance(device, str) else ""
    if ":" in text and not text.startswith("cuda"):
        return text  # a gpudash key: "nvidia:1", "cpu:0"
    return resolve_device(device)


def _torch_name(device: DeviceInfo) -> str:
    if device.vendor == "cpu":
        return "cpu"
    return f"cuda:{device.torch_index if device.torch_index is not None else device.index}"


def _without_discovery(device: Any) -> DeviceInfo:
    """The device described by the CPU or by torch alone, when discovery failed."""
    where = resolve_device(device)
    if where == "cpu":
        from gpudash.devices.cpu import CpuBackend

        return CpuBackend().devices()[0]
    from gpudash.devices.torch_view import TorchView

    index = int(where.split(":")[1])
    found = [d for d in TorchView(_torch()).devices() if d.torch_index == index]
    if not found:
        raise GpudashError(f"device {where}: torch does not see it")
    return found[0]


def gather(device: Any = None, use_verified: bool = True, machine: Any = None) -> Evidence:
    """Everything gpudash.amp decides from, for one device (see the module docstring)."""
    if is_plugin_device(device):
        return _plugin_evidence(device, use_verified)
    from gpudash.errors import UsageError
    from gpudash.measure.device_names import find_device
    from gpudash.recommend.facts import facts_for
    from gpudash.recommend.machine_facts import add_remembered, machine_facts

    notes: list[str] = []
    found = _machine(machine, notes)
    if found is None:
        info = _without_discovery(device)
        facts = facts_for(info, not_run={"probe": notes[-1], "bench": notes[-1]})
        return Evidence(_torch_name(info), info, facts, False, notes)
    wanted = _selector(found, device)
    try:
        info = find_device(found, wanted)
    except UsageError:
        known = ", ".join(d.key for d in found.devices) or "none"
        raise GpudashError(f"device {device!r}: not on {found.label} machine (it has: {known})") from None
    facts = machine_facts(found, info)
    if use_verified:
        add_remembered(facts, found)
    else:
        why = "use_verified=False: remembered probe and benchmark results not used"
        facts.not_run["probe"] = facts.not_run["bench"] = why
    return Evidence(_torch_name(info), info, facts, found.replayed, notes)


def _plugin_evidence(device: Any, use_verified: bool) -> Evidence:
    """A plugin's Device: its own fields; a live one also what was remembered for the same device here."""
    from gpudash.devices import REPLAY_ENV
    from gpudash.recommend.facts import facts_for
    from gpudash.recommend.machine_facts import add_remembered, machine_facts

    runtime = Runtime(**{k: device.runtime.get(k) for k in ("torch", "cuda", "hip", "driver")})
    info = DeviceInfo(
        vendor=device.vendor,
        index=device.index,
        name=device.name,
        compute_capability=device.compute_capability,
        gfx_target=device.gfx_target,
        memory_total_bytes=device.memory_total_bytes,
        multiprocessors=device.multiprocessors,
        max_clock_mhz=device.max_clock_mhz,
        torch_index=device.torch_index,
        cpu_features=list(device.cpu_features or []),
        extra=dict(device.extra or {}),
    )
    where = device.torch_device or _torch_name(info)
    notes: list[str] = []
    if device.replayed:
        facts = facts_for(info, replayed=True, source="replayed", runtime=runtime)
        return Evidence(where, info, facts, True, notes)
    live = None
    if use_verified and os.environ.get(REPLAY_ENV):
        notes.append(f"{REPLAY_ENV} is set: this live device's remembered results are not read")
    elif use_verified:
        live = _machine(None, notes)
    same = _same_device(live, info) if live is not None else None
    if live is None or same is None:
        facts = facts_for(info, runtime=runtime)
        facts.not_run["probe"] = facts.not_run["bench"] = "no remembered results for this device here"
        return Evidence(where, info, facts, False, notes)
    facts = machine_facts(live, same)
    add_remembered(facts, live)
    return Evidence(where, same, facts, False, notes)


def _same_device(machine, info: DeviceInfo) -> DeviceInfo | None:
    """This machine's record of the device a plugin describes: same vendor, torch ordinal and chip."""
    for dev in machine.devices:
        if dev.vendor != info.vendor:
            continue
        if info.vendor == "cpu":
            if dev.name == info.name and sorted(dev.cpu_features) == sorted(info.cpu_features):
                return dev
            continue
        same_slot = dev.torch_index is not None and dev.torch_index == info.torch_index
        same_chip = dev.name == info.name or (
            (dev.compute_capability, dev.gfx_target) == (info.compute_capability, info.gfx_target)
            and (dev.compute_capability or dev.gfx_target)
        )
        if same_slot and same_chip:
            return dev
    return None
