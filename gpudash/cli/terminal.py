"""What the faces ask of the terminal: is stdout one, how wide is it, and may the text be coloured.

Colour follows https://no-color.org: NO_COLOR set to anything but "" turns it off, as does `--no-color`;
otherwise text is coloured only on a terminal (not in a pipe or a file), unless `--force-color` asks for it.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def width(stream: TextIO | None = None) -> int | None:
    """Columns of the terminal `stream` writes to; None when it is not a terminal (nothing is cut then)."""
    stream = stream or sys.stdout
    if not is_terminal(stream):
        return None
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return None


def columns(stream: TextIO | None = None) -> int | None:
    """The width text for `stream` should keep to: the terminal's; in a pipe or a file, COLUMNS when it is set
    to a positive number (`COLUMNS=80 gpudash info | less`); otherwise None, no limit (nothing cut, every
    column: what a script reading the output wants). docs/cli.md documents it."""
    found = width(stream)
    if found is not None:
        return found
    try:
        value = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def height(stream: TextIO | None = None) -> int | None:
    stream = stream or sys.stdout
    try:
        return os.get_terminal_size(stream.fileno()).lines or None
    except (OSError, ValueError, AttributeError):
        return None


def use_color(no_color: bool = False, force_color: bool = False, stream: TextIO | None = None) -> bool:
    if no_color or os.environ.get("NO_COLOR", ""):
        return False
    if force_color:
        return True
    return is_terminal(stream) and os.environ.get("TERM") != "dumb"
