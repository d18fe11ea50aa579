"""The child side of plugin runs: task functions the runner calls in a child process.

Running: the child re-creates the plugin manager from the sources the parent used (entry points, plugin
dirs, and the plugins vetting ruled out), once per child process, then finds the plugin's check or benchmark
by name and runs it. Whatever goes wrong here (the plugin does not load, raises, returns something
malformed) is raised, and the runner reports it.

Vetting (gpudash.plugin_manager.loading): the child imports one candidate plugin and calls its register_*
hooks, so that a crash or a hang there kills this child rather than gpudash, and sends back the plugin's
catalog (gpudash.plugin_manager.catalog), from which gpudash knows the plugin without importing it.

What this side returns is checked again in gpudash's own process (gpudash.plugin_manager.checked): code
that runs here may have changed anything in this process.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpudash.plugin_manager import (
    GpudashPluginManager,
    Registered,
    catalog,
    collect_benchmarks,
    collect_checks,
    list_plugins,
    make_plugin_manager,
)
from gpudash.plugin_manager.collect import use_kernel_plugin_dirs
from gpudash.plugin_manager.records import ENTRY_POINT
from gpudash.plugin_manager.sources import EntryPoint, load_entry_point, load_plugin_file
from gpudash.plugins_api import ENTRY_POINT_GROUP, STATUSES, CheckResult, Device, bench_result_dict

_managers: dict[tuple, GpudashPluginManager] = {}
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _manager(sources: dict[str, Any]) -> GpudashPluginManager:
    vet_failures = dict(sources.get("vet_failures") or {})
    key = (
        tuple(sources.get("plugin_dirs") or ()),
        bool(sources.get("load_entry_points")),
        tuple(sorted(vet_failures.items())),
    )
    if key not in _managers:
        # Load errors were already reported by the parent; here they only matter for the plugin asked for.
        # The parent's vetting verdicts are reused: a plugin that crashed its vetting would crash this child.
        _managers[key] = make_plugin_manager(key[0], key[1], on_error=None, vet_failures=vet_failures)
        if key[1]:  # kernels asked for in this child (a benchmark's dispatcher) come from the same plugins
            use_kernel_plugin_dirs(key[0], _managers[key])
    return _managers[key]


def vetting_ready() -> bool:
    """The vetting child's first task: by now python and the plugin machinery are imported, so the time limit
    of each candidate after it covers only the candidate's own code."""
    return True


def vet_plugin(
    name: str, source: str, target: str, dist_name: str, version: str | None, progress: Callable[..., None]
) -> dict[str, Any]:
    """Import one plugin and call its register_* hooks; returns its catalog (catalog.describe). Any exception
    the plugin raises, KeyboardInterrupt included, is a load error in it; a crash or hang is the runner's."""
    pm = GpudashPluginManager(on_error=None)
    pm.contained = True
    progress(stage="import")
    if source == ENTRY_POINT:
        record = load_entry_point(pm, EntryPoint(name, target, ENTRY_POINT_GROUP), dist_name, version)
    else:
        record = load_plugin_file(pm, Path(target))
    progress(stage="register")
    list_plugins(pm)
    return catalog.describe(pm, record)


def end_vetting() -> None:
    """Leave without a normal interpreter exit: threads or atexit handlers the vetted plugins left behind could
    hold the exit up or crash it, and that must not be blamed on anything."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


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
    # The check contract (gpudash/contracts/check.schema.json): text is text, env names are variable names.
    result.summary = "" if result.summary is None else str(result.summary)
    result.remediation = "" if result.remediation is None else str(result.remediation)
    result.env = {str(k): str(v) for k, v in (result.env or {}).items()}
    bad = [name for name in result.env if not ENV_NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"check returned env {bad[0]!r}, which is not an environment variable name")
    if not isinstance(result.details, dict):
        raise TypeError(f"check returned details of type {type(result.details).__name__}, not a dict")
    return result.to_dict()  # checked in the parent (checked.py): a NaN makes the result an error there


def run_benchmark(
    sources: dict[str, Any], plugin: str, benchmark: str, device: dict[str, Any], budget_s: float
) -> list[dict[str, Any]]:
    pm = _manager(sources)
    obj = _find(pm, collect_benchmarks(pm), plugin, benchmark, "benchmark")
    items = obj.run(Device.from_dict(device), budget_s)
    out = []
    for item in items or []:
        entry = bench_result_dict(item)
        entry["plugin"], entry["benchmark"] = plugin, benchmark
        out.append(entry)  # checked in the parent (checked.py): an inf or NaN figure makes the run an error
    return out
