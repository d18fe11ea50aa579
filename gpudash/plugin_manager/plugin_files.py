"""One-file plugins: every `*.py` in a plugin directory (`--plugins-dir`, the `plugin_dirs` config key) whose
name does not start with "_" is a plugin named after the file."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from gpudash.errors import UsageError
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import FILE, PluginRecord, plugin_key
from gpudash.plugin_manager.reporting import run_plugin_code
from gpudash.plugin_manager.selection import selected


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
    path = Path(directory).expanduser()
    if not path.is_dir():
        raise UsageError(f"plugin directory {directory}: not a directory")
    return [
        file for file in sorted(path.glob("*.py")) if not file.stem.startswith("_") and selected(allowed, file.stem)
    ]


def load_plugin_file(pm: GpudashPluginManager, file: Path) -> PluginRecord:
    """Import one plugin file and register it, unless it failed its vetting."""
    record = PluginRecord(file.stem, FILE, str(file.resolve()))
    pm.records[record.name] = record
    vetting_failure = pm.vet_failures.get(plugin_key(FILE, record.origin))
    if vetting_failure:
        pm.fail(record, vetting_failure)
        return record
    module = _import_file(pm, record, file)
    if module is not None:
        record.version = getattr(module, "__version__", None)
        pm.add(module, record)
    return record


def _import_file(pm: GpudashPluginManager, record: PluginRecord, file: Path) -> ModuleType | None:
    # A name unique to the file's path: two folders may each hold a plugin of the same name.
    module_name = f"gpudash_plugin_file_{file.stem}_{hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:8]}"

    def execute() -> ModuleType:
        spec = importlib.util.spec_from_file_location(module_name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
        spec.loader.exec_module(module)
        return module

    imported, module = run_plugin_code(pm, record, f"failed to import {file}: ", execute)
    if not imported:
        sys.modules.pop(module_name, None)
    return module
