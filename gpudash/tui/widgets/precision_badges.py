"""Precision badges (fp64 · tf32 · fp16 · bf16 · fp8 · int8) and their legend.

Each level differs by colour *and* glyph *and* text style, so it reads on a monochrome terminal too.
The levels come from the architecture tables (spec), not from a measurement; the legend says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.content import Content
from textual.widgets import Static

from gpudash.precisions import BADGE_PRECISIONS

# support level -> (glyph, style)
LEVELS = {
    "native": ("●", "bold $text on $success-muted"),
    "emulated": ("◐", "$text on $warning-muted"),
    "absent": ("○", "$text-disabled strike"),
}
RANK = {"absent": 0, "emulated": 1, "native": 2}
FP8_FLAVOURS = ("fp8_e4m3", "fp8_e5m2")


def badge_levels(support: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """Badge name -> level; the fp8 badge shows the better of e4m3 and e5m2."""

    def level(name: str) -> str:
        value = str(support.get(name, {}).get("support", "absent"))
        return value if value in LEVELS else "absent"

    out = {}
    for badge in BADGE_PRECISIONS:
        if badge == "fp8":
            out[badge] = max((level(f) for f in FP8_FLAVOURS), key=RANK.__getitem__)
        else:
            out[badge] = level(badge)
    return out


def badge(name: str, level: str) -> Content:
    glyph, style = LEVELS[level]
    return Content.styled(f" {glyph} {name} ", style)


class PrecisionBadges(Static):
    """One row of badges for one device."""

    DEFAULT_CSS = """
    PrecisionBadges { height: 1; width: 1fr; }
    """

    def __init__(self, support: Mapping[str, Mapping[str, object]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.levels: dict[str, str] = {}
        if support is not None:
            self.set_support(support)

    def set_support(self, support: Mapping[str, Mapping[str, object]], detail: str = "") -> None:
        self.levels = badge_levels(support)
        parts = [badge(name, level) for name, level in self.levels.items()]
        self.update(Content(" ").join(parts))
        lines = [f"{name}: {level}" for name, level in self.levels.items()]
        fp8 = ", ".join(f"{f.split('_')[1]} {support.get(f, {}).get('support', 'absent')}" for f in FP8_FLAVOURS)
        self.tooltip = "\n".join(
            [
                "Precisions by the architecture tables (spec):",
                *lines,
                f"fp8 flavours: {fp8}",
                *([detail] if detail else []),
            ]
        )


class BadgeLegend(Static):
    """What the badge styles mean, shown once above the cards."""

    DEFAULT_CSS = """
    BadgeLegend { height: 1; width: 1fr; }
    """

    def on_mount(self) -> None:
        parts = [Content.styled("precision (spec tables):", "$text-muted")]
        parts += [badge(level, level) for level in LEVELS]
        self.update(Content(" ").join(parts))
