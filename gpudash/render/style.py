"""Colour for plain-text output: ANSI SGR codes around a cell, or nothing when colour is off.

Which text may be coloured is the face's decision (gpudash.cli.terminal.use_color); the renderers only ask a
Style, so the same function draws the coloured table for a terminal and the plain one for a pipe. Cells are
padded before they are coloured: escape codes take no columns on screen but count in len().
"""

from __future__ import annotations

BOLD, DIM, RED, GREEN, YELLOW, BLUE, MAGENTA, CYAN = "1", "2", "31", "32", "33", "34", "35", "36"
RESET = "\x1b[0m"


class Style:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not codes or not text:
            return text
        return f"\x1b[{';'.join(codes)}m{text}{RESET}"


# Check verdicts (gpudash.plugins_api.checks): what passed green, what needs a look yellow, what broke red.
STATUS_COLORS: dict[str, tuple[str, ...]] = {
    "pass": (GREEN,),
    "warn": (YELLOW,),
    "fail": (RED, BOLD),
    "error": (RED, BOLD),
    "skip": (DIM,),
}


def load_color(percent: float | None, light: float, heavy: float) -> tuple[str, ...]:
    """nvitop's load colours: green below `light` %, yellow up to `heavy` %, red from there (its defaults are
    10/75 for utilization and 10/80 for memory)."""
    if percent is None:
        return ()
    if percent < light:
        return (GREEN,)
    return (YELLOW,) if percent < heavy else (RED,)
