"""`--watch`: a frame every few seconds until Ctrl-C, as gpustat -i and `watch` do.

On a terminal each frame is drawn over the last on the alternate screen (the shell's screen comes back
afterwards), cut to the terminal's size so nothing scrolls; to a pipe or a file each frame is printed after the
last. Nothing is kept between frames but what the devices layer keeps itself (bounded), so memory stays flat
however long it runs. Ctrl-C ends it with exit code 0: that is how one stops watching.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from gpudash.cli import terminal
from gpudash.errors import EXIT_OK

ALTERNATE_SCREEN, MAIN_SCREEN = "\x1b[?1049h", "\x1b[?1049l"
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"
HOME, CLEAR_LINE_END, CLEAR_BELOW = "\x1b[H", "\x1b[K", "\x1b[J"


def watch(
    frame: Callable[[int | None], str],
    interval: float,
    count: int | None = None,
    *,
    redraw: bool,
    blank_line: bool = True,
    stream: TextIO | None = None,
) -> int:
    """Show `frame(width)` every `interval` seconds, `count` times or until Ctrl-C; `redraw` in place (a
    terminal) or one after another (a pipe), a blank line between them unless `blank_line` is False (JSON
    Lines)."""
    out = stream or sys.stdout
    if redraw:
        out.write(ALTERNATE_SCREEN + HIDE_CURSOR)
    try:
        rounds = 0
        while True:
            started = time.monotonic()
            if redraw:
                _draw(out, frame(terminal.width(out)), terminal.height(out))
            else:
                out.write(("\n" if rounds and blank_line else "") + frame(terminal.columns(out)) + "\n")
            out.flush()
            rounds += 1
            if count is not None and rounds >= count:
                return EXIT_OK
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        if redraw:
            out.write(SHOW_CURSOR + MAIN_SCREEN)
            out.flush()


def _draw(out: TextIO, text: str, rows: int | None) -> None:
    lines = text.split("\n")
    if rows is not None and len(lines) > rows - 1:
        hidden = len(lines) - (rows - 2)
        lines = lines[: rows - 2] + [f"… {hidden} more lines (a taller terminal shows them)"]
    out.write(HOME + "".join(line + CLEAR_LINE_END + "\n" for line in lines) + CLEAR_BELOW)
