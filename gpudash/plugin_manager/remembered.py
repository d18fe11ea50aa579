"""Remembered check results: the last `gpudash check` of each device, for the exporter and the fleet view.

Like remembered probes, results are merged per device (checking one device keeps the others' results) and a
replayed machine is never saved: its table-only checks describe a snapshot, not this host.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpudash import store
from gpudash.models import now_iso, to_dict

CHECKS_KIND = "checks"
CHECKS_VERSION = 1


def remember_checks(machine, results: Iterable[Any]) -> Any:
    """Save `results` (CheckResults or dicts) over the previous results of the same devices; returns the path."""
    if machine.replayed:
        return None
    fresh = [r if isinstance(r, dict) else to_dict(r) for r in results]
    checked = {r.get("device") for r in fresh}
    previous = remembered_checks(machine)
    kept = [r for r in (previous[1] if previous else []) if r.get("device") not in checked]
    stamped = [{**r, "checked_at": now_iso()} for r in fresh]
    return store.save(CHECKS_KIND, machine, {"version": CHECKS_VERSION, "checks": kept + stamped})


def remembered_checks(machine) -> tuple[str, list[dict[str, Any]]] | None:
    """(saved_at, [check result dicts, each with its `checked_at`]) or None when nothing valid was saved."""
    record = store.load(CHECKS_KIND, machine)
    if record is None:
        return None
    saved_at, data = record
    path = store.path_of(CHECKS_KIND, machine)
    if isinstance(data, dict) and data.get("version") not in (None, CHECKS_VERSION):
        store.damaged(
            path,
            f"written by another gpudash (checks record version {data.get('version')!r}, "
            f"this gpudash reads {CHECKS_VERSION}); the next check replaces it",
        )
        return None
    checks = data.get("checks") if isinstance(data, dict) else None
    if not isinstance(checks, list):
        store.damaged(path, "expected an object with a list of checks")
        return None
    if not all(isinstance(c, dict) for c in checks):  # the others are still good
        store.damaged(path, "a check result that is not an object was left out")
    return saved_at, [c for c in checks if isinstance(c, dict)]
