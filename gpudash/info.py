"""The `info` view of a machine: devices, architecture, spec precisions; the `info --json` contract."""

from __future__ import annotations

from typing import Any

from gpudash.devices import Machine
from gpudash.knowledge import arch_for
from gpudash.models import DeviceInfo, Sample, to_dict
from gpudash.precisions import PRECISIONS

INFO_VERSION = 1


def precision_support(device: DeviceInfo) -> dict[str, dict[str, Any]]:
    arch = arch_for(device)
    torch_view = device.extra.get("torch")
    if not isinstance(torch_view, dict):
        torch_view = {}
    out = {}
    for name in PRECISIONS:
        level = arch.precisions.get(name, "absent")
        entry: dict[str, Any] = {"native": level == "native", "support": level}
        if name in torch_view:
            entry["torch"] = torch_view[name]
        out[name] = entry
    return out


def device_json(device: DeviceInfo, sample: Sample | None = None) -> dict[str, Any]:
    arch = arch_for(device)
    out = {
        "index": device.index,
        "vendor": device.vendor,
        "name": device.name,
        "arch": arch.family,
        "compute_capability": device.compute_capability,
        "gfx_target": device.gfx_target,
        "memory_total_bytes": device.memory_total_bytes,
        "fp8_dtype": arch.fp8_dtype,
        "precisions": precision_support(device),
        # Extensions beyond the contract's required keys:
        "uuid": device.uuid,
        "pci_bus_id": device.pci_bus_id,
        "driver_version": device.driver_version,
        "multiprocessors": device.multiprocessors,
        "max_clock_mhz": device.max_clock_mhz,
        "torch_index": device.torch_index,
        "sources": device.sources,
        "notes": list(arch.notes),
        "unavailable": device.unavailable,
    }
    if device.vendor == "cpu":
        out["cpu_features"] = device.cpu_features
        out["logical_cores"] = device.logical_cores
    if sample is not None:
        out["sample"] = to_dict(sample)
    return out


def info_json(machine: Machine, with_samples: bool = True) -> dict[str, Any]:
    samples = machine.sample_all() if with_samples else {}
    return {
        "version": INFO_VERSION,
        "replayed": machine.replayed,
        "source": machine.label,
        "host": to_dict(machine.host),
        "runtime": to_dict(machine.runtime),
        "devices": [device_json(d, samples.get(d.key)) for d in machine.devices],
        "notes": machine.notes,
    }
