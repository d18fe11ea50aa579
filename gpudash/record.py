"""Recording this machine as a snapshot file, the replay format (gpudash/contracts/snapshot.schema.json).

A snapshot holds everything the knowledge tables read, for every device, so a replay answers as the machine
itself did: names, compute capability or gfx target, SMs/CUs/cores, clocks, memory, torch's view, and for the
CPU its ISA features, logical and physical core counts (logical_cores, multiprocessors) and the
vendor/family/model triple the microarchitecture lookup needs (under "extra": cpu_vendor, cpu_family, cpu_model),
and an AMD target's feature flags (extra.gfx_features: sramecc, xnack). Each GPU's health counters (ECC, rows,
XIDs, clock events, PCIe, ...: gpudash.devices.nvml_health, amd_health) are read once at the end and kept under
"health_counters", so a replay judges the same checks (docs/health.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gpudash import __version__
from gpudash.devices import Machine
from gpudash.devices.snapshot_file import FORMAT, GFX_FEATURES, TABLE_EXTRAS, VERSION
from gpudash.models import json_safe, now_iso, to_dict

_SKIP = {"sources", "extra"}


def _health_counters(machine: Machine, key: str) -> dict[str, Any] | None:
    """The GPU's health counters as its driver child read them; None for a device without (the CPU)."""
    reader = machine.health_readers.get(key)
    if reader is None:
        return None
    try:
        raw = reader()
    except Exception as exc:  # an in-process adapter raising: recorded as unread, as the checks would judge it
        raw = {"counters": {}, "unavailable": {"all": str(exc) or type(exc).__name__}}
    if not isinstance(raw, dict):
        return None
    unavailable = raw.get("unavailable")
    return json_safe(
        {
            "counters": dict(raw.get("counters") or {}),
            "unavailable": {str(k): str(v) for k, v in (unavailable.items() if isinstance(unavailable, dict) else ())},
        }
    )


def _device_entry(device, samples: list[dict], health: dict[str, Any] | None = None) -> dict[str, Any]:
    entry = {k: v for k, v in to_dict(device).items() if k not in _SKIP}
    torch_view = device.extra.get("torch")
    if isinstance(torch_view, dict):
        entry["torch"] = torch_view
    table_facts: dict[str, Any] = {k: str(device.extra[k]) for k in TABLE_EXTRAS if device.extra.get(k) is not None}
    if device.extra.get(GFX_FEATURES):
        table_facts[GFX_FEATURES] = dict(device.extra[GFX_FEATURES])
    if table_facts:
        entry["extra"] = table_facts
    entry["samples"] = samples
    if health is not None:
        entry["health_counters"] = health
    return entry


def record(
    machine: Machine, seconds: float, interval: float, sleep: Callable[[float], None] = time.sleep
) -> dict[str, Any]:
    count = max(1, int(seconds / interval) + 1) if seconds > 0 else 1
    per_device: dict[str, list[dict]] = {d.key: [] for d in machine.devices}
    for i in range(count):
        if i:
            sleep(interval)
        for key, sample in machine.sample_all().items():
            per_device[key].append(json_safe(to_dict(sample)))  # NaN is not JSON: null
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "gpudash_version": __version__,
        "recorded": now_iso(),
        "host": to_dict(machine.host),
        "runtime": to_dict(machine.runtime),
        "devices": [_device_entry(d, per_device[d.key], _health_counters(machine, d.key)) for d in machine.devices],
    }
    if machine.replayed:  # a re-recorded replay must not pass for a real machine
        data["origin"] = f"re-recorded from a replay ({machine.label})"
    return data
