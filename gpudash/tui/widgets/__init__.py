"""Widgets for the dashboard: device cards and the pieces they are made of."""

from gpudash.tui.widgets.device_card import DeviceCard
from gpudash.tui.widgets.gauge import Gauge
from gpudash.tui.widgets.history_chart import HistoryChart
from gpudash.tui.widgets.precision_badges import BadgeLegend, PrecisionBadges

__all__ = ["BadgeLegend", "DeviceCard", "Gauge", "HistoryChart", "PrecisionBadges"]
