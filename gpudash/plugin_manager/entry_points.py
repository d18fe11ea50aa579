"""Plugins from installed packages: the entry points in the group "gpudash" (gpudash's own built-ins too)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator

from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import ENTRY_POINT, PluginRecord, plugin_key
from gpudash.plugin_manager.reporting import run_plugin_code
from gpudash.plugin_manager.selection import canonical, selected
from gpudash.plugins_api import ENTRY_POINT_GROUP, PROJECT

EntryPoint = importlib.metadata.EntryPoint


def load_entry_point_plugins(pm: GpudashPluginManager, allowed: set[str] | None) -> None:
    pm.load_entry_points = True
    for dist_name, version, ep in selected_entry_points(allowed):
        existing = pm.records.get(ep.name)
        if existing is not None:
            if existing.target != ep.value:  # the same distribution seen twice on sys.path is fine
                pm.fail(existing, f"another entry point also named {ep.name!r} ({ep.value}) was ignored")
            continue
        load_entry_point(pm, ep, dist_name, version)


def load_entry_point(pm: GpudashPluginManager, ep: EntryPoint, dist_name: str, version: str | None) -> PluginRecord:
    """Import one entry point and register what it names, unless it failed its vetting."""
    record = PluginRecord(ep.name, ENTRY_POINT, f"{dist_name} {version}", version=version, target=ep.value)
    pm.records[ep.name] = record
    vetting_failure = pm.vet_failures.get(plugin_key(ENTRY_POINT, ep.value))
    if vetting_failure:
        pm.fail(record, vetting_failure)
        return record
    imported, plugin = run_plugin_code(pm, record, f"failed to import {ep.value}: ", ep.load)
    if imported:
        pm.add(plugin, record)
    return record


def selected_entry_points(allowed: set[str] | None) -> Iterator[tuple[str, str | None, EntryPoint]]:
    """(distribution name, its version, entry point) for each entry point GPUDASH_LOAD_PLUGINS lets in."""
    for dist, ep in _entry_points():
        dist_name = dist.metadata["Name"] or "unnamed distribution"  # broken metadata must not stop the rest
        if selected(allowed, ep.name, dist_name):
            yield dist_name, dist.version, ep


def is_builtin(dist_name: str, ep: EntryPoint) -> bool:
    """One of gpudash's own plugins: a `plugins.*` module of the gpudash distribution itself."""
    return canonical(dist_name) == PROJECT and ep.value.startswith("plugins.")


def _entry_points():
    """(distribution, entry point) for the group, from every distribution on sys.path.

    Not importlib.metadata.entry_points(): it keeps only the first distribution of each name, so a stale
    gpudash.egg-info in a checkout (on sys.path as the current directory) would hide the installed metadata
    and with it gpudash's own plugins. Duplicates are dropped by the caller (same name, same target).
    """
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                yield dist, ep
