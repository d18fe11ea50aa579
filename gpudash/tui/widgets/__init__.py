"""Widgets for the dashboard: device cards and the pieces they are made of.

The names below are loaded on first use (PEP 562), so importing one widget module of this package does not
import the device card and its chart library (plotext), which the first screen does not show."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudash.tui.widgets.device_card import DeviceCard
    from gpudash.tui.widgets.gauge import Gauge
    from gpudash.tui.widgets.history_chart import HistoryChart
    from gpudash.tui.widgets.precision_badges import BadgeLegend, PrecisionBadges

_MODULES = {
    "BadgeLegend": "precision_badges",
    "DeviceCard": "device_card",
    "Gauge": "gauge",
    "HistoryChart": "history_chart",
    "PrecisionBadges": "precision_badges",
}

__all__ = ["BadgeLegend", "DeviceCard", "Gauge", "HistoryChart", "PrecisionBadges"]


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
