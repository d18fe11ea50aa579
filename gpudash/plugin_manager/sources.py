"""Where plugins come from: entry points of installed packages, and one-file plugins in plugin directories.

Entry points in the group "gpudash" (gpudash's own built-ins too). In a plugin directory (`--plugins-dir`,
the `plugin_dirs` config key) every `*.py` whose name does not start with "_" is a plugin named after its
file. A child process that loads the same plugins again gets the import path `child_env` builds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from gpudash.errors import UsageError
from gpudash.measure.runner import import_path_without_cwd
from gpudash.plugin_manager import catalog
from gpudash.plugin_manager.manager import GpudashPluginManager, run_plugin_code
from gpudash.plugin_manager.records import (
    ENTRY_POINT,
    FILE,
    PluginRecord,
    canonical,
    plugin_key,
    selected,
)
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
    """Import one entry point and register what it names, unless it failed its vetting or, in gpudash's own
    process, is a third-party plugin: that one is taken from its vetting child's catalog."""
    record = PluginRecord(ep.name, ENTRY_POINT, f"{dist_name} {version}", version=version, target=ep.value)
    pm.records[ep.name] = record
    if not _may_import(pm, record, plugin_key(ENTRY_POINT, ep.value), trusted=is_builtin(dist_name, ep)):
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
    """One of gpudash's own plugins: a `gpudash_plugins.*` module of the gpudash distribution itself."""
    return canonical(dist_name) == PROJECT and ep.value.startswith("gpudash_plugins.")


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


def load_plugin_dir(pm: GpudashPluginManager, directory: str, allowed: set[str] | None) -> None:
    files = plugin_files_in(directory, allowed)
    pm.plugin_dirs.append(str(Path(directory).expanduser().resolve()))
    for file in files:
        if file.stem in pm.records:
            pm.fail(pm.records[file.stem], f"one-file plugin {file} has the same name and was ignored")
            continue
        load_plugin_file(pm, file)


def plugin_files_in(directory: str, allowed: set[str] | None) -> list[Path]:
    """The one-file plugins in `directory` that GPUDASH_LOAD_PLUGINS lets in, in name order."""
    check_plugin_dir_name(directory)
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise UsageError(f"plugin directory {directory}: not a directory")
    return [
        file for file in sorted(path.glob("*.py")) if not file.stem.startswith("_") and selected(allowed, file.stem)
    ]


def check_plugin_dir_name(directory: str, option: str = "plugin directory") -> None:
    """A plugin folder is taken only when named: an empty name would be the working directory, whose every .py
    file would then run. "." says that on purpose. `option` names where it came from (--plugins-dir, a key)."""
    if not str(directory).strip():
        raise UsageError(f"{option} {directory!r}: an empty name is not a folder (write '.' for the working directory)")


def load_plugin_file(pm: GpudashPluginManager, file: Path) -> PluginRecord:
    """Import one plugin file and register it, unless it failed its vetting."""
    record = PluginRecord(file.stem, FILE, str(file.resolve()))
    pm.records[record.name] = record
    if not _may_import(pm, record, plugin_key(FILE, record.origin), trusted=False):
        return record
    module = _import_file(pm, record, file)
    if module is not None:
        version = getattr(module, "__version__", None)  # a module may spell it (1, 2) or 1.2: shown as text
        record.version = None if version is None else str(version)
        pm.add(module, record)
    return record


def _may_import(pm: GpudashPluginManager, record: PluginRecord, key: str, trusted: bool) -> bool:
    """Whether to import the plugin here. If not, its record is filled from its vetting verdict or catalog."""
    vetting_failure = pm.vet_failures.get(key)
    if vetting_failure:
        pm.fail(record, vetting_failure)
        return False
    if trusted or pm.imports_plugins:
        return True
    entry = pm.catalog.get(key)
    if entry is None:  # vetting reports on every third-party plugin; this one it never saw
        pm.fail(record, "not vetted, so not loaded")
    else:
        catalog.apply(pm, record, entry)
    return False


def _import_file(pm: GpudashPluginManager, record: PluginRecord, file: Path) -> ModuleType | None:
    # A name unique to the file's path: two folders may each hold a plugin of the same name.
    module_name = f"gpudash_plugin_file_{file.stem}_{hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:8]}"

    def execute() -> ModuleType:
        spec = importlib.util.spec_from_file_location(module_name, file)
        if spec is None or spec.loader is None:
            raise ImportError("not a Python source file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
        spec.loader.exec_module(module)
        return module

    imported, module = run_plugin_code(pm, record, f"failed to import {file}: ", execute)
    if not imported:
        sys.modules.pop(module_name, None)
    return module


PLUGIN_CHILD_ENV = "GPUDASH_PLUGIN_CHILD"  # set in every child that runs plugin code (vetting or running)


def in_plugin_child() -> bool:
    return bool(os.environ.get(PLUGIN_CHILD_ENV))


def child_env() -> dict[str, str]:
    """The child sees this process's sys.path, so it finds the same plugins (e.g. a target dir a test added),
    but never the working directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(import_path_without_cwd())
    env[PLUGIN_CHILD_ENV] = "1"
    return env
