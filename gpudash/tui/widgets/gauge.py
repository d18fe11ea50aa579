"""A one-line labelled bar: `mem  ━━━━━━━━━━ 12.3 / 80.0 GiB (15%)`; no reading: an empty track, reason as tooltip."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

BAR = "━"  # one glyph, two colours: reads as a track with a fill, like Textual's ProgressBar


class Gauge(Widget):
    DEFAULT_CSS = """
    Gauge { height: 1; width: 1fr; }
    """

    fraction: reactive[float | None] = reactive(None, layout=False)
    text: reactive[str] = reactive("")

    def __init__(
        self,
        label: str,
        *,
        colour: str = "$success",
        warn_at: float | None = None,
        error_at: float | None = None,
        label_width: int = 5,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.label = label
        self.colour = colour  # a colour or theme variable for the fill
        self.warn_at = warn_at  # fractions above which the bar turns amber / red (None: never)
        self.error_at = error_at
        self.label_width = label_width

    def show(self, fraction: float | None, text: str, reason: str | None = None) -> None:
        """Set the bar (None: no reading) and the figure beside it; `reason` explains a missing reading."""
        self.fraction = None if fraction is None else min(1.0, max(0.0, fraction))
        self.text = text
        if self.tooltip != reason:
            self.tooltip = reason

    def _colour(self, fraction: float) -> str:
        if self.error_at is not None and fraction >= self.error_at:
            return "$error"
        if self.warn_at is not None and fraction >= self.warn_at:
            return "$warning"
        return self.colour

    def render(self) -> Content:
        label = Content.styled(self.label.ljust(self.label_width), "$text-muted")
        figure = Content(f" {self.text}")
        bar_width = max(4, min(40, self.size.width - self.label_width - len(figure)))
        if self.fraction is None:
            bar = Content.styled(BAR * bar_width, "$surface-lighten-2")
            figure = Content.styled(figure.plain, "$text-muted")
        else:
            filled = round(self.fraction * bar_width)
            bar = Content.assemble(
                (BAR * filled, self._colour(self.fraction)), (BAR * (bar_width - filled), "$surface-lighten-2")
            )
        return Content.assemble(label, bar, figure)
