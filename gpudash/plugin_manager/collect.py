"""Collecting what plugins register: each register_* hook of each plugin, called once per manager.

Each plugin's hook is called on its own, so one that raises or registers something malformed costs only
itself; what each plugin provided is kept on its record for `gpudash plugins`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from gpudash.plugin_manager.loading import make_plugin_manager
from gpudash.plugin_manager.manager import HOOKS, GpudashPluginManager, run_plugin_code
from gpudash.plugin_manager.records import PluginRecord, Registered
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


_kernel_cache: list[Kernel] | None = None
_kernel_lock = threading.Lock()


def kernels_from_plugins() -> list[Kernel]:
    """Kernels from the installed plugins (entry points only), gathered once per process. A kernel runs in the
    caller's process, so the plugins are imported here (after vetting)."""
    global _kernel_cache
    with _kernel_lock:
        if _kernel_cache is None:
            _kernel_cache = [r.obj for r in collect_kernels(make_plugin_manager(import_here=True))]
        return list(_kernel_cache)
