"""Identical devices as one group: 8 H100s with the same answers are one column, "nvidia:0-7 (8x H100 ...)".

Used where devices are compared side by side (precision matrix, benchmarks): eight equal columns say less
than one, and need sideways scrolling. Devices are grouped only when the caller's `same` says their
figures are the same, so a GPU that answers differently keeps a column of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from gpudash.render.monitor import ranges, short_name

DeviceDoc = dict[str, Any]  # one device of a probe or bench JSON document ("key", "vendor", "index", "name")


@dataclass(frozen=True)
class DeviceGroup:
    members: tuple[DeviceDoc, ...]

    @property
    def first(self) -> DeviceDoc:
        return self.members[0]

    @property
    def keys(self) -> list[str]:
        return [m["key"] for m in self.members]

    @property
    def key(self) -> str:
        """ "nvidia:0" alone, "nvidia:0-7" for a group (indices as ranges)."""
        first = self.first
        if len(self.members) == 1:
            return str(first["key"])
        return f"{first['vendor']}:{ranges([m['index'] for m in self.members])}"

    @property
    def label(self) -> str:
        """ "nvidia:0" alone, "nvidia:0-7 (8x H100 80GB HBM3)" for a group."""
        if len(self.members) == 1:
            return self.key
        return f"{self.key} ({len(self.members)}x {short_name(str(self.first.get('name') or '?'))})"


def group_devices(devices: Sequence[DeviceDoc], same: Callable[[DeviceDoc], Hashable]) -> list[DeviceGroup]:
    """Devices of one vendor and name whose `same(device)` is equal, in the order their first member comes."""
    groups: dict[tuple[Any, ...], list[DeviceDoc]] = {}
    for dev in devices:
        groups.setdefault((dev.get("vendor"), dev.get("name"), same(dev)), []).append(dev)
    return [DeviceGroup(tuple(members)) for members in groups.values()]


def frozen(value: Any) -> Hashable:
    """A JSON value as something hashable, for `same` functions comparing whole entries."""
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    return value
