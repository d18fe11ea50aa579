"""A third-party plugin's catalog: what its vetting child learned, so that gpudash's own process never imports it.

The vetting child (gpudash.plugin_manager.host.vet_plugin) imports the plugin, calls its register_* hooks and
sends back describe(): its version, hooks and load errors, and for each check, benchmark and kernel what
gpudash needs to decide where and how long to run it. Here apply() checks that description and turns it into
the plugin's record and its registered items (PluginItem). The plugin's code runs only in children: its
prints, its changes to gpudash's modules, an exception or interrupt it raises while loading, and the memory
it takes all stay there.
"""

from __future__ import annotations

import math
from typing import Any

from gpudash.plain_text import one_line
from gpudash.plugin_manager.checked import Invalid, line_field, name_field
from gpudash.plugin_manager.manager import HOOKS, GpudashPluginManager
from gpudash.plugin_manager.records import PluginItem, PluginRecord, Registered

MAX_ITEMS = 1000  # per hook and plugin
MAX_ERRORS = 20  # load errors kept per plugin; the rest are counted


# -- in the vetting child ------------------------------------------------------------------------------------


def describe(pm: GpudashPluginManager, record: PluginRecord) -> dict[str, Any]:
    """What the parent needs of a plugin just loaded and collected in this (child) process."""
    items: dict[str, list[dict[str, Any]]] = {}
    for hook in HOOKS:
        items[hook] = []
        for reg in pm.collected.get(hook, []):
            if reg.plugin != record.name:
                continue
            try:
                items[hook].append(_describe_item(hook, reg.obj))
            except Exception as exc:  # a property that raises, say
                pm.fail(record, f"{hook}: {reg.name!r} cannot be described: {type(exc).__name__}: {exc}")
    return {
        "version": record.version,
        "loaded": record.loaded,
        "hooks": list(record.hooks),
        "errors": list(record.errors),
        "items": items,
    }


def _describe_item(hook: str, obj: Any) -> dict[str, Any]:
    if hook == "register_kernels":
        return {
            "op": obj.op,
            "name": obj.name,
            "precision": obj.precision,
            "priority": obj.priority,
            "description": obj.description,
        }
    vendors = getattr(obj, "vendors", None)
    return {
        "name": obj.name,
        "description": getattr(obj, "description", "") or "",
        "needs_device": getattr(obj, "needs_device", True),
        "vendors": list(vendors) if isinstance(vendors, (list, tuple)) else vendors,
        "timeout_s": getattr(obj, "timeout_s", None),
    }


# -- in gpudash's own process --------------------------------------------------------------------------------


def apply(pm: GpudashPluginManager, record: PluginRecord, entry: Any) -> None:
    """Fill `record` and the plugin's registered items from its vetting child's description (checked here)."""
    found: dict[str, list[Registered]] = {hook: [] for hook in HOOKS}
    pm.catalogued[record.name] = found
    if not isinstance(entry, dict):
        pm.fail(record, f"its vetting child sent {type(entry).__name__}, not a description")
        return
    version = entry.get("version")
    record.version = None if version is None else one_line(version, 100)
    hooks = entry.get("hooks")
    record.hooks = sorted({h for h in hooks if h in HOOKS}) if isinstance(hooks, list) else []
    errors = entry.get("errors")
    errors = errors if isinstance(errors, list) else ["its vetting child sent no list of errors"]
    for message in errors[:MAX_ERRORS]:
        pm.fail(record, one_line(message))
    if len(errors) > MAX_ERRORS:
        pm.fail(record, f"and {len(errors) - MAX_ERRORS} more errors")
    items = entry.get("items")
    items = items if isinstance(items, dict) else {}
    for hook in HOOKS:
        raw_items = items.get(hook) or []
        if not isinstance(raw_items, list) or len(raw_items) > MAX_ITEMS:
            pm.fail(record, f"{hook}: not a list of at most {MAX_ITEMS} items; none taken")
            continue
        labels: set[str] = set()
        for raw in raw_items:
            try:
                item = _item(hook, raw)
            except Invalid as exc:
                pm.fail(record, f"{hook}: {exc}; left out")
                continue
            label = f"{item.op}:{item.name}" if hook == "register_kernels" else item.name
            if label not in labels:
                labels.add(label)
                found[hook].append(Registered(record.name, label, item))
    record.loaded = entry.get("loaded") is True


def _item(hook: str, raw: Any) -> PluginItem:
    if not isinstance(raw, dict):
        raise Invalid(f"expected an object, got {type(raw).__name__}")
    name = name_field(raw.get("name"), "name")
    description = line_field(raw.get("description") or "", f"{name}: description")
    if hook == "register_kernels":
        priority = raw.get("priority", 0)
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise Invalid(f"{name}: priority {one_line(repr(priority), 40)} is not an integer")
        return PluginItem(
            name,
            description,
            op=name_field(raw.get("op"), f"{name}: op"),
            precision=name_field(raw.get("precision"), f"{name}: precision"),
            priority=priority,
        )
    needs_device = raw.get("needs_device", True)
    if not isinstance(needs_device, int):  # bool is an int; 0 and 1 were always taken as false and true
        raise Invalid(f"{name}: needs_device {one_line(repr(needs_device), 40)} is not true or false")
    return PluginItem(
        name,
        description,
        needs_device=bool(needs_device),
        vendors=_vendors(raw.get("vendors"), name),
        timeout_s=_timeout(raw.get("timeout_s"), name),
    )


def _vendors(value: Any, name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Invalid(f"{name}: vendors {one_line(repr(value), 60)} is not a list of vendor names")
    return tuple(name_field(v, f"{name}: vendors") for v in value)


def _timeout(value: Any, name: str) -> float | None:
    if value is None or value == 0:
        return None  # gpudash's default limit
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise Invalid(f"{name}: timeout_s {one_line(repr(value), 40)} is not a positive number of seconds")
    return float(value)
