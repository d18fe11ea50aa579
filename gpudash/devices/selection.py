"""Which devices a command works on: the one a user names (`--device`), those `--only` keeps, and the GPUs that
CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES leave visible (`--only-visible`).

A device is named the same way everywhere: its key as `gpudash info` shows it (nvidia:1, amd:0, cpu:0), `cpu`,
torch's name `cuda:N`, or a bare GPU index N (device N on a machine without GPUs).

The visibility variables follow the runtimes' own rules:
- CUDA_VISIBLE_DEVICES (NVIDIA; HIP honours it too when HIP_VISIBLE_DEVICES is unset): ordinals or UUIDs
  (`GPU-...`, `MIG-...`, unique prefixes allowed); the list ends at the first entry that names no device or
  repeats one, and an empty value hides every GPU (CUDA C Programming Guide, "CUDA Environment Variables":
  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars).
- ROCR_VISIBLE_DEVICES (AMD, applied first) takes ordinals or UUIDs; HIP_VISIBLE_DEVICES then takes ordinals
  into what ROCR left (ROCm, "GPU isolation techniques" and "HIP environment variables":
  https://rocm.docs.amd.com/projects/HIP/en/latest/reference/env_variables.html).
Ordinals are the runtimes' numbering: when torch's view of this process was merged, the GPUs torch sees are
exactly the visible ones; otherwise an NVIDIA ordinal is read as the NVML index (PCI bus order, what CUDA uses
with CUDA_DEVICE_ORDER=PCI_BUS_ID) and an AMD ordinal follows amdsmi's hip_id. The CPU is never hidden by them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from gpudash.devices.machine import Machine
from gpudash.errors import UsageError
from gpudash.models import DeviceInfo

VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def find_device(machine: Machine, wanted: str, option: str = "--device") -> DeviceInfo:
    """The device `wanted` names (a key, cpu, cuda:N or a GPU index N, as the module's docstring says); a
    UsageError naming `option` and the devices there are otherwise."""
    text = str(wanted).strip().lower()
    by_key = {d.key: d for d in machine.devices}
    if text in by_key:
        return by_key[text]
    gpus = [d for d in machine.devices if d.vendor != "cpu"]
    if text == "cpu":
        match = [d for d in machine.devices if d.vendor == "cpu"]
    elif text.startswith("cuda:") and text[5:].isdigit():
        number = int(text[5:])
        match = [d for d in gpus if d.torch_index == number]
        if not any(d.torch_index is not None for d in gpus):  # torch's numbering unknown (a replay): by index
            match = [d for d in gpus if d.index == number]
    elif text.isdigit():
        match = [d for d in (gpus or machine.devices) if d.index == int(text)]
    else:
        match = []
    if not match:
        known = ", ".join(by_key) or "none"
        hidden = (
            f"; hidden by --only/--only-visible: {', '.join(d.key for d in machine.hidden)}" if machine.hidden else ""
        )
        raise UsageError(f"{option} {wanted!r}: no such device (this machine has: {known}{hidden})")
    return match[0]


def split_list(values: Iterable[str] | str | None) -> list[str]:
    """'0,1' and ['0', '2,3'] to ['0', '1'] and ['0', '2', '3']: options take a comma list, repeated or not."""
    if values is None:
        return []
    items = [values] if isinstance(values, str) else list(values)
    return [part.strip() for item in items for part in str(item).split(",") if part.strip()]


def find_devices(machine: Machine, wanted: Iterable[str] | str | None, option: str = "--device") -> list[DeviceInfo]:
    """Every device named (in the order named, each once); [] when nothing was named."""
    found: dict[str, DeviceInfo] = {}
    for name in split_list(wanted):
        device = find_device(machine, name, option)
        found.setdefault(device.key, device)
    return list(found.values())


def select(
    machine: Machine,
    only: Sequence[str] | str | None = None,
    only_visible: bool = False,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Keep the devices `--only` names (GPUs by index or key; the CPU only when named), or with `only_visible`
    the GPUs the visibility variables leave (and the CPU). The rest move to machine.hidden, saying so in a note;
    without either, a note says when a visibility variable is set but not applied."""
    env = os.environ if environ is None else environ
    names = split_list(only)
    if names:
        kept = {d.key for d in find_devices(machine, names, "--only")}
        why = f"--only {','.join(names)}"
    elif only_visible:
        kept, notes = visible_keys(machine, env)
        machine.notes.extend(notes)
        set_vars = [f"{name}={env[name]}" for name in VISIBILITY_VARIABLES if name in env]
        why = f"--only-visible ({', '.join(set_vars) or 'no visibility variable set'})"
    else:
        set_vars = [f"{name}={env[name]}" for name in VISIBILITY_VARIABLES if name in env]
        if set_vars and any(d.vendor != "cpu" for d in machine.devices):
            machine.notes.append(f"{', '.join(set_vars)} is set; every GPU is shown (--only-visible shows only those)")
        return
    hidden = [d for d in machine.devices if d.key not in kept]
    if not hidden:
        return
    machine.devices = [d for d in machine.devices if d.key in kept]
    machine.hidden.extend(hidden)
    machine.notes.append(f"{why}: {len(hidden)} of {len(machine.devices) + len(hidden)} devices hidden")


def visible_keys(machine: Machine, environ: Mapping[str, str]) -> tuple[set[str], list[str]]:
    """Keys of the devices the visibility variables leave visible, and notes on how they were read."""
    notes: list[str] = []
    kept = {d.key for d in machine.devices if d.vendor == "cpu"}
    for vendor, variables in (
        ("nvidia", ("CUDA_VISIBLE_DEVICES",)),
        ("amd", ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")),
    ):
        gpus = [d for d in machine.devices if d.vendor == vendor]
        if not gpus:
            continue
        if vendor == "amd" and "HIP_VISIBLE_DEVICES" not in environ and "CUDA_VISIBLE_DEVICES" in environ:
            variables = ("ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")  # HIP honours CUDA's variable
        applied = [name for name in variables if name in environ]
        if not applied:
            kept.update(d.key for d in gpus)
            continue
        seen_by_torch = [d for d in gpus if "torch" in d.sources]
        if seen_by_torch:  # torch in this process applied the variables itself: its devices are the visible ones
            kept.update(d.key for d in seen_by_torch)
            continue
        ordered = sorted(
            gpus, key=lambda d: d.torch_index if vendor == "amd" and d.torch_index is not None else d.index
        )
        for name in applied:
            ordered = _parse(environ[name], ordered, machine)
        kept.update(d.key for d in ordered)
        if vendor == "nvidia" and environ.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID" and len({d.name for d in gpus}) > 1:
            notes.append(
                "CUDA_VISIBLE_DEVICES ordinals were read in PCI bus order; CUDA numbers mixed GPUs fastest first "
                "unless CUDA_DEVICE_ORDER=PCI_BUS_ID"
            )
    return kept, notes


def _parse(value: str, ordered: list[DeviceInfo], machine: Machine) -> list[DeviceInfo]:
    """The devices a visibility list names, in its order; it ends at the first entry that names nothing or
    repeats one (as the runtimes read it)."""
    chosen: list[DeviceInfo] = []
    for entry in (part.strip() for part in value.split(",")):
        device = _entry_device(entry, ordered, machine)
        if device is None or device in chosen:
            break
        chosen.append(device)
    return chosen


def _entry_device(entry: str, ordered: list[DeviceInfo], machine: Machine) -> DeviceInfo | None:
    if entry.isdigit():
        number = int(entry)
        return ordered[number] if number < len(ordered) else None
    if not entry.upper().startswith(("GPU-", "MIG-")):
        return None
    wanted = _hex(entry)
    if not wanted:
        return None
    if entry.upper().startswith("MIG-"):  # a MIG device: visible through its GPU
        for device in ordered:
            for instance in machine.sample(device).mig_instances or []:
                if instance.uuid and _hex(instance.uuid).startswith(wanted):
                    return device
        return None
    matches = [d for d in ordered if d.uuid and _hex(d.uuid).startswith(wanted)]
    return matches[0] if len(matches) == 1 else None  # an ambiguous prefix names nothing


def _hex(uuid: str) -> str:
    """'GPU-5d5b8c66-f1f5' -> '5d5b8c66f1f5': UUIDs compared without their prefix, dashes or case."""
    text = uuid.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text.replace("-", "")
