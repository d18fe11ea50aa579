"""One GPU's health as the dashboard's device detail shows it: the worst severity and where it came from, each
finding (WARN, CRITICAL, UNKNOWN) with its action, and what `gpudash check` remembered this GPU failing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash.plain_text import one_line
from gpudash.render.info_health import health_source

if TYPE_CHECKING:
    from gpudash.health.device_summary import DeviceHealth


def health_detail(health: DeviceHealth | None, *, read: bool, interval_s: float | None) -> list[str]:
    """`health`: the device's, or None when no counter check applies to it (the CPU); `read`: whether a health
    reading was made yet; `interval_s`: how often it is read again (None: once, a replay)."""
    if not read:
        return ["health: reading the driver's counters…"]
    if health is None:
        return ["health: no counter check applies to this device (the host's checks are in the Checks view)"]
    again = f"; read every {interval_s:g} s" if interval_s else ""
    where = health_source(health.to_json()) + again
    applied = sum(r.severity is not None for r in health.results)
    if health.worst is None:
        lines = [f"health: no check applied ({where})"]
    else:
        lines = [f"health: {health.worst} ({applied} check{'s' if applied != 1 else ''} applied; {where})"]
    for r in health.findings():
        action = f" -> {r.action}" if r.action != "none" else ""
        lines.append(f"  {r.severity} {r.id}: {one_line(r.summary, 300)}{action}")
    for failure in health.remembered:
        lines.append(f"  this GPU {one_line(failure.line(), 400)}")
    return lines
