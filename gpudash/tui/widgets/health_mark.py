"""A device line's health mark: the worst severity of its GPU's counter checks in four cells (gpudash.health);
empty where no check applies (the CPU) or before the first reading."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gpudash.tui.widgets.bars import Palette


def health_mark(health: Any, palette: Palette) -> Text:
    """`health`: the device's DeviceHealth (gpudash.health.device_summary), or None."""
    worst = getattr(health, "worst", None)
    if worst is None:
        return Text("")
    # Imported here: the first frame has no health reading yet (the watch starts after it), and whatever set
    # `worst` already loaded gpudash.health.
    from gpudash.health import CRITICAL, OK, UNKNOWN, WARN

    marks = {OK: "OK", WARN: "WARN", CRITICAL: "CRIT", UNKNOWN: "UNKN"}
    style = {WARN: palette.warning, CRITICAL: palette.error, UNKNOWN: palette.muted}.get(worst)
    return Text(marks[worst], style=style or "")
