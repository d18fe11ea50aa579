"""Text bars for table cells, in eighths of a cell: a 4-cell bar still shows 32 steps.

Table cells are rich Text, so the colours come from the app theme resolved to rich colours (`Palette`),
refreshed when the theme changes.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.color import Color

EIGHTHS = " ▏▎▍▌▋▊▉"
FULL, TRACK = "█", "░"


class Palette(NamedTuple):
    util: Style
    memory: Style
    warning: Style
    error: Style
    track: Style
    muted: Style
    label: Style

    @classmethod
    def of(cls, app: App[object]) -> Palette:
        variables = app.theme_variables

        def colour(name: str, fallback: str) -> Style:
            try:
                return Style(color=Color.parse(variables.get(name, fallback)).rich_color)
            except Exception:  # an odd theme value: a plain fallback beats a crash
                return Style(color=fallback)

        return cls(
            util=colour("accent", "magenta"),
            memory=colour("primary", "blue"),
            warning=colour("warning", "yellow"),
            error=colour("error", "red") + Style(bold=True),
            track=Style(dim=True),
            muted=Style(dim=True, italic=True),
            label=Style(bold=True),
        )


def bar(fraction: float | None, width: int, style: Style, track: Style) -> Text:
    """A `width`-cell bar filled to `fraction` (0..1); None: an empty track."""
    if width <= 0:
        return Text("")
    if fraction is None:
        return Text(TRACK * width, style=track)
    eighths = round(min(1.0, max(0.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    filled = FULL * full + (EIGHTHS[part] if part and full < width else "")
    return Text.assemble((filled, style), (TRACK * (width - len(filled)), track))


def level_style(fraction: float | None, base: Style, palette: Palette, warn_at: float, error_at: float) -> Style:
    """The bar's colour: its own below `warn_at`, amber from there, red from `error_at`."""
    if fraction is None:
        return base
    if fraction >= error_at:
        return palette.error
    if fraction >= warn_at:
        return palette.warning
    return base
