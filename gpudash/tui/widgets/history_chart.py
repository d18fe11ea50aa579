"""Memory and utilization over the history window (config ui.history_seconds), as a plotext line chart.

plotext builds the whole chart on the UI thread inside `render()` (10-15 ms for one card's chart),
so the series are downsampled to the chart's width and the chart is replotted only when the picture
can change: once per column of time (history_seconds / width; 600 s on 67 columns is every 9 s), and
never more than twice a second. The x axis is always the whole window, so the line scrolls one column
at a time. The gauges beside the chart show every reading. Off-screen charts are never rendered.
"""

from __future__ import annotations

import time
from typing import Any

from textual.color import Color
from textual.timer import Timer
from textual_plotext import PlotextPlot

from gpudash.history import downsample
from gpudash.tui.widgets.chart_lines import LINES

AXIS_WIDTH = 6  # columns plotext spends on y tick labels and the frame
# Quarter blocks, not braille: a third cheaper to build, and present in every monospace font.
MARKER = "hd"


def _ago(seconds: float) -> str:
    return "now" if seconds == 0 else f"-{seconds / 60:g}m" if seconds >= 120 else f"-{seconds:g}s"


class HistoryChart(PlotextPlot):
    DEFAULT_CSS = """
    HistoryChart { width: 1fr; height: 1fr; min-width: 24; }
    """
    MIN_REPLOT_GAP_S = 0.5

    def __init__(self, interval_s: float, window_s: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.interval_s = interval_s
        self.window_s = window_s
        self._series: dict[str, list[float | None]] = {}
        self._last_replot = 0.0
        self._pending: Timer | None = None
        self._plotted_data = False
        self.replots = 0  # for tests and the benchmark: how often plotext data was rebuilt

    @property
    def replot_gap_s(self) -> float:
        """Seconds of history one column covers: replotting sooner would only jiggle the last column."""
        return max(self.MIN_REPLOT_GAP_S, self.window_s / max(1, self.size.width - AXIS_WIDTH))

    def show_series(self, series: dict[str, list[float | None]]) -> None:
        """New data; replotted now or, if the last replot was too recent, once the gap has passed."""
        self._series = series
        wait = self._last_replot + self.replot_gap_s - time.monotonic()
        if wait <= 0 or not self._plotted_data:  # the first readings show at once
            self.replot()
        elif self._pending is None:
            self._pending = self.set_timer(wait, self.replot)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.replot())  # line colours follow the theme

    def on_resize(self) -> None:
        self.replot()  # the downsampling depends on the width

    def replot(self) -> None:
        if self._pending is not None:
            self._pending.stop()
        self._pending = None
        self._last_replot = time.monotonic()
        self.replots += 1
        plt = self.plt
        plt.clear_data()
        width = max(8, self.size.width - AXIS_WIDTH)
        span = self.window_s
        missing = []
        self._plotted_data = any(v is not None for values in self._series.values() for v in values)
        for name, (label, colour) in LINES.items():
            values = self._series.get(name) or []
            n = len(values)
            times: list[float | None] = [-(n - 1 - i) * self.interval_s for i in range(n)]
            points = [(x, y) for x, y in zip(downsample(times, width), downsample(values, width)) if y is not None]
            if points:
                xs, ys = zip(*points)
                rgb = Color.parse(self.app.theme_variables.get(colour[1:], "white")).rgb
                plt.plot(xs, ys, label=label, color=rgb, marker=MARKER)
            else:  # say so rather than draw a made-up line
                missing.append(label)
        if not any(self._series.values()):
            plt.title("waiting for readings")
        else:
            plt.title(f"{', '.join(missing)}: n/a" if missing else "")
        plt.xlim(-span, 0)
        plt.ylim(0, 100)
        plt.yticks([0, 50, 100])
        plt.xticks([-span, -span / 2, 0], [_ago(span), _ago(span / 2), "now"])
        self.refresh()
