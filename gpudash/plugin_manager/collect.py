"""Collecting what plugins register: each register_* hook of each plugin, called once per manager.

Each plugin's hook is called on its own, so one that raises or registers something malformed costs only
itself; what each plugin provided is kept on its record for `gpudash plugins`.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gpudash.plugin_manager.loading import make_plugin_manager
from gpudash.plugin_manager.manager import HOOKS, GpudashPluginManager, run_plugin_code
from gpudash.plugin_manager.records import PluginRecord, Registered, allowed_names
from gpudash.plugins_api import Kernel


def _is_runnable(obj: Any) -> bool:
    return isinstance(getattr(obj, "name", None), str) and bool(obj.name) and callable(getattr(obj, "run", None))


# hook -> (what one item is called, its key in PluginRecord.provides, the test an item must pass)
_KINDS = {
    "register_checks": ("check", "checks", _is_runnable),
    "register_benchmarks": ("benchmark", "benchmarks", _is_runnable),
    "register_kernels": ("kernel", "kernels", lambda obj: isinstance(obj, Kernel)),
}


def _register_callback(
    pm: GpudashPluginManager, hook: str, record: PluginRecord, names: list[str], found: list[Registered]
) -> Callable[..., None]:
    """The `register` a plugin's hook receives: it validates each item and adds it to `found`."""
    kind, _, valid = _KINDS[hook]

    def register(*items: Any) -> None:
        for item in items:
            if isinstance(item, type):  # a class: instantiate it, as a convenience
                item = item()
            if not valid(item):
                pm.fail(record, f"{hook}: {item!r} is not a {kind} (see gpudash.plugins_api)")
                continue
            label = item.name if kind != "kernel" else f"{item.op}:{item.name}"
            if label in names:
                pm.fail(record, f"{hook}: a second {kind} named {label!r} was ignored")
                continue
            names.append(label)
            found.append(Registered(record.name, label, item))

    return register


def _collect(pm: GpudashPluginManager, hook: str) -> list[Registered]:
    if hook in pm.collected:
        return pm.collected[hook]
    plural = _KINDS[hook][1]
    impls = {impl.plugin_name: impl for impl in getattr(pm.hook, hook).get_hookimpls()}
    found: list[Registered] = []
    for name, record in list(pm.records.items()):  # plugins in load order, not pluggy's
        names: list[str] = []
        if name in pm.catalogued:  # a third-party plugin, registered in its vetting child
            items = pm.catalogued[name][hook]
            found.extend(items)
            names = [reg.name for reg in items]
        elif name in impls:
            impl = impls[name]
            register = _register_callback(pm, hook, record, names, found)
            kwargs = {"register": register} if "register" in impl.argnames else {}  # a hook may take no arguments
            run_plugin_code(pm, record, f"{hook} raised ", functools.partial(impl.function, **kwargs))
        else:
            continue
        record.provides[plural] = names
    pm.collected[hook] = found
    return found


def collect_checks(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_checks")


def collect_benchmarks(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_benchmarks")


def collect_kernels(pm: GpudashPluginManager) -> list[Registered]:
    return _collect(pm, "register_kernels")


def list_plugins(pm: GpudashPluginManager) -> list[PluginRecord]:
    """Every plugin tried, loaded or not, with what it provides. Runs the register hooks, nothing more."""
    for hook in HOOKS:
        _collect(pm, hook)
    return list(pm.records.values())


# Kernels run in the caller's process. They are gathered once per set of plugin directories; a plugin child
# (gpudash.plugin_manager.host) hands over the manager it already loaded, so its kernels come from the same
# plugins as its checks and benchmarks, without loading or vetting them again.
_kernel_cache: dict[tuple[tuple[str, ...], tuple[str, ...] | None], list[Kernel]] = {}
_kernel_managers: dict[tuple[str, ...], GpudashPluginManager] = {}
_kernel_dirs: tuple[str, ...] | None = None  # set by use_kernel_plugin_dirs; None: the config file's
_kernel_lock = threading.Lock()


def _resolved(dirs: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    return tuple(str(Path(d).expanduser().resolve()) for d in dirs)


def use_kernel_plugin_dirs(
    dirs: Sequence[str | os.PathLike[str]] | None, pm: GpudashPluginManager | None = None
) -> None:
    """The plugin directories kernels come from in this process when a caller names none (None: back to the
    config file's `plugin_dirs`). `pm`: a manager that already loaded exactly these sources (a plugin child's)."""
    global _kernel_dirs
    with _kernel_lock:
        _kernel_dirs = None if dirs is None else _resolved(dirs)
        if pm is not None and _kernel_dirs is not None:
            _kernel_managers[_kernel_dirs] = pm
            for key in [k for k in _kernel_cache if k[0] == _kernel_dirs]:
                del _kernel_cache[key]


def kernel_plugin_dirs() -> tuple[str, ...]:
    """Where one-file kernel plugins come from by default: the directories set for this process
    (use_kernel_plugin_dirs), else the `plugin_dirs` key of the config file (--config is a CLI option;
    training code gets $GPUDASH_CONFIG or the user config file). A bad config file raises UsageError."""
    if _kernel_dirs is not None:
        return _kernel_dirs
    from gpudash.config import load_config

    return _resolved(load_config()["plugin_dirs"])


def kernels_from_plugins(plugin_dirs: Sequence[str | os.PathLike[str]] | None = None) -> list[Kernel]:
    """Kernels from every plugin source: entry points and the one-file plugins in `plugin_dirs` (default:
    kernel_plugin_dirs()), gathered once per process and set of directories. A kernel runs in the caller's
    process, so the plugins are imported here (after vetting). Raises UsageError for a missing directory."""
    dirs = kernel_plugin_dirs() if plugin_dirs is None else _resolved(plugin_dirs)
    allowed = allowed_names()  # GPUDASH_LOAD_PLUGINS changes what loads
    key = (dirs, None if allowed is None else tuple(sorted(allowed)))
    with _kernel_lock:
        if key not in _kernel_cache:
            pm = _kernel_managers.get(dirs) or make_plugin_manager(list(dirs), import_here=True)
            _kernel_cache[key] = [r.obj for r in collect_kernels(pm)]
        return list(_kernel_cache[key])
