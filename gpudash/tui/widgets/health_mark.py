"""A device line's health mark: the worst severity of its GPU's counter checks in four cells (gpudash.health);
empty where no check applies (the CPU) or before the first reading."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gpudash.health import CRITICAL, OK, UNKNOWN, WARN
from gpudash.tui.widgets.bars import Palette

MARKS = {OK: "OK", WARN: "WARN", CRITICAL: "CRIT", UNKNOWN: "UNKN"}


def health_mark(health: Any, palette: Palette) -> Text:
    """`health`: the device's DeviceHealth (gpudash.health.device_summary), or None."""
    worst = getattr(health, "worst", None)
    if worst is None:
        return Text("")
    style = {WARN: palette.warning, CRITICAL: palette.error, UNKNOWN: palette.muted}.get(worst)
    return Text(MARKS[worst], style=style or "")
