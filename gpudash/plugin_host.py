"""The child side of plugin runs: task functions the runner calls to run one named check or benchmark.

The child re-creates the plugin manager from the sources the parent used (entry points, plugin dirs), once
per child process, then finds the plugin's check or benchmark by name and runs it. Whatever goes wrong
here (the plugin does not load, raises, returns something malformed) is raised, and the runner reports it.
"""

from __future__ import annotations

from typing import Any

from gpudash.plugin_manager import (
    GpudashPluginManager, Registered, collect_benchmarks, collect_checks, make_plugin_manager,
)
from gpudash.plugins_api import STATUSES, CheckResult, Device, bench_result_dict

_managers: dict[tuple, GpudashPluginManager] = {}


def _manager(sources: dict[str, Any]) -> GpudashPluginManager:
    key = (tuple(sources.get("plugin_dirs") or ()), bool(sources.get("load_entry_points")))
    if key not in _managers:
        # Load errors were already reported by the parent; here they only matter for the plugin asked for.
        _managers[key] = make_plugin_manager(key[0], key[1], on_error=None)
    return _managers[key]


def _find(pm: GpudashPluginManager, found: list[Registered], plugin: str, name: str, kind: str) -> Any:
    for reg in found:
        if reg.plugin == plugin and reg.name == name:
            return reg.obj
    record = pm.records.get(plugin)
    if record is not None and record.errors:
        raise RuntimeError(f"plugin {plugin!r} did not load in the child: {record.errors[-1]}")
    raise LookupError(f"plugin {plugin!r} registers no {kind} named {name!r} in the child process")


def run_check(sources: dict[str, Any], plugin: str, check: str, device: dict[str, Any]) -> dict[str, Any]:
    pm = _manager(sources)
    obj = _find(pm, collect_checks(pm), plugin, check, "check")
    dev = Device.from_dict(device)
    result = obj.run(dev)
    if isinstance(result, dict):
        result = CheckResult.from_dict({"plugin": plugin, "check": check, "device": dev.key, **result})
    if not isinstance(result, CheckResult):
        raise TypeError(f"check returned {type(result).__name__}, not a CheckResult")
    if result.status not in STATUSES:
        raise ValueError(f"check returned status {result.status!r}, not one of {', '.join(STATUSES)}")
    result.plugin, result.check, result.device = plugin, check, dev.key
    result.env = {str(k): str(v) for k, v in (result.env or {}).items()}
    return result.to_dict()


def run_benchmark(sources: dict[str, Any], plugin: str, benchmark: str, device: dict[str, Any],
                  budget_s: float) -> list[dict[str, Any]]:
    pm = _manager(sources)
    obj = _find(pm, collect_benchmarks(pm), plugin, benchmark, "benchmark")
    items = obj.run(Device.from_dict(device), budget_s)
    out = []
    for item in items or []:
        entry = bench_result_dict(item)
        entry["plugin"], entry["benchmark"] = plugin, benchmark
        out.append(entry)
    return out
