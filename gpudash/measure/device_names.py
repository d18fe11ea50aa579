"""The names a device goes by: what a user types (`--device`) and what torch calls it.

Probes, benchmarks and `gpudash export` all pick devices the same way, so `--device` means the same
everywhere.
"""

from __future__ import annotations

from gpudash.devices import Machine
from gpudash.errors import UsageError
from gpudash.models import DeviceInfo


def torch_device(device: DeviceInfo) -> str | None:
    """The torch device string for a gpudash device ("cpu", "cuda:N"), or None when torch cannot see it."""
    if device.vendor == "cpu":
        return "cpu"
    if device.torch_index is not None:
        return f"cuda:{device.torch_index}"  # ROCm builds call AMD GPUs cuda:N too
    return None


def find_device(machine: Machine, wanted: str) -> DeviceInfo:
    """A device by key ("nvidia:1", "cpu:0"), "cpu", torch name ("cuda:0"), or bare index N (GPU N, or
    device N on a machine without GPUs)."""
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
        raise UsageError(f"--device {wanted!r}: no such device (this machine has: {known})")
    return match[0]
