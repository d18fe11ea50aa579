"""The `info` view of a machine: devices, architecture, spec precisions; the `info --json` contract."""

from __future__ import annotations

from typing import Any

from gpudash.allocation.idle import IdleWatch
from gpudash.devices import Machine
from gpudash.devices.fields import lost_reason
from gpudash.knowledge import arch_for
from gpudash.models import LOST, OK, DeviceInfo, Sample, json_safe, to_dict
from gpudash.precisions import PRECISIONS

INFO_VERSION = 1
UNKNOWN = "unknown"  # a lost GPU's architecture and precisions: nothing is claimed for it


def device_status(device: DeviceInfo, sample: Sample | None = None) -> tuple[str, str | None]:
    """("ok", None), or ("lost", the driver's reason) when enumeration or the latest reading found it gone."""
    for holder in (sample, device):
        if holder is not None and holder.status == LOST:
            return LOST, lost_reason(holder.unavailable.get("device") or "unreachable")
    return OK, None


def precision_support(device: DeviceInfo) -> dict[str, dict[str, Any]]:
    if device.status == LOST:  # every precision key stays, none claimed
        return {name: {"native": False, "support": UNKNOWN} for name in PRECISIONS}
    arch = arch_for(device)
    recorded = device.extra.get("torch")
    torch_view: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    out = {}
    for name in PRECISIONS:
        level = arch.precisions.get(name, "absent")
        entry: dict[str, Any] = {"native": level == "native", "support": level}
        if name in torch_view:
            entry["torch"] = torch_view[name]
        out[name] = entry
    return out


def device_json(
    device: DeviceInfo, sample: Sample | None = None, health: dict[str, Any] | None = None
) -> dict[str, Any]:
    from gpudash.knowledge.mamf import mamf_json  # its table is read here only, not by the dashboard's first frame

    arch = arch_for(device)
    status, status_reason = device_status(device, sample)
    known = device.status != LOST
    out = {
        "index": device.index,
        "vendor": device.vendor,
        "name": device.name,
        "arch": arch.family if known else UNKNOWN,
        "compute_capability": device.compute_capability,
        "gfx_target": device.gfx_target,
        "memory_total_bytes": device.memory_total_bytes,
        "fp8_dtype": arch.fp8_dtype if known else None,
        "precisions": precision_support(device),
        "status": status,
        "status_reason": status_reason,
        # Extensions beyond the contract's required keys:
        "uuid": device.uuid,
        "pci_bus_id": device.pci_bus_id,
        "driver_version": device.driver_version,
        "multiprocessors": device.multiprocessors,
        "max_clock_mhz": device.max_clock_mhz,
        "torch_index": device.torch_index,
        "compute_partition": device.compute_partition,  # AMD's counterpart of MIG (SPX..CPX, NPS1..NPS8)
        "memory_partition": device.memory_partition,
        "vbios": device.vbios,  # None where the driver does not report it
        "sources": device.sources,
        "notes": list(arch.notes) if known else [f"GPU lost: {status_reason}"],
        "mamf": mamf_json(device) if known else {},
        "unavailable": device.unavailable,
        # the worst of the GPU's counter checks (gpudash.health.device_summary); None for the CPU
        "health": health,
    }
    features = device.extra.get("gfx_features")
    if device.vendor == "amd" and isinstance(features, dict) and features:
        out["gfx_features"] = dict(features)
    if device.vendor == "cpu":
        out["cpu_features"] = device.cpu_features
        out["logical_cores"] = device.logical_cores
    if sample is not None:
        out["sample"] = json_safe(to_dict(sample))  # a replayed file may hold NaN: JSON has none
    return out


def info_json(
    machine: Machine,
    with_samples: bool = True,
    health: dict[str, dict[str, Any]] | None = None,
    idle: IdleWatch | None = None,
) -> dict[str, Any]:
    """`health`: device key -> DeviceHealth.to_json() (gpudash.health.device_summary), read by the caller.
    `idle`: what judges allocated-but-idle over this and the earlier readings (`info --watch` keeps one across
    its rounds); without it (one reading) `allocated_idle` is null."""
    samples = machine.sample_all() if with_samples else {}
    if idle is not None:
        idle.record(samples)
    health = health or {}
    runtime = to_dict(machine.runtime)
    return {
        "version": INFO_VERSION,
        "replayed": machine.replayed,
        "source": machine.label,
        "host": to_dict(machine.host),
        # "runtime" keeps only version strings (text outputs print every value in it); the reasons
        # for the ones missing sit next to it.
        "runtime": {k: v for k, v in runtime.items() if k != "unavailable"},
        "runtime_unavailable": runtime.get("unavailable") or {},
        "devices": [device_json(d, samples.get(d.key), health.get(d.key)) for d in machine.devices],
        "notes": machine.notes,
        "allocated_idle": idle.to_json([d.key for d in machine.devices]) if idle is not None else None,
    }
