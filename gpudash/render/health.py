"""Health results as text: grouped by device, worst first, the checks that do not apply folded into one count
per device, the action beside each finding."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudash.health import HealthResult

_ORDER = {"CRITICAL": 0, "WARN": 1, "UNKNOWN": 2, "OK": 3}


def tally(results: Sequence[HealthResult]) -> str:
    counts = Counter(r.severity or "n/a" for r in results)
    return ", ".join(f"{counts[s]} {s}" for s in ("CRITICAL", "WARN", "UNKNOWN", "OK", "n/a") if counts[s])


def render_health(results: Sequence[HealthResult]) -> str:
    if not results:
        return ""
    lines = [f"health: {tally(results)}"]
    devices = list(dict.fromkeys(r.device for r in results))
    w_dev = max(len(d) for d in devices)
    w_id = max(len(r.id) for r in results)
    for device in devices:
        mine = [r for r in results if r.device == device]
        applied = sorted((r for r in mine if r.severity is not None), key=lambda r: _ORDER[r.severity or "OK"])
        for r in applied:
            action = f"  -> {r.action}" if r.action != "none" else ""
            lines.append(
                f"{device.ljust(w_dev)}  {r.id.ljust(w_id)}  {(r.severity or '').ljust(8)}  {r.summary}{action}"
            )
        skipped = len(mine) - len(applied)
        if skipped:
            lines.append(f"{device.ljust(w_dev)}  {'(not applicable)'.ljust(w_id)}  {'-'.ljust(8)}  {skipped} checks")
    return "\n".join(lines)
