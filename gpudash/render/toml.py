"""A small TOML writer for the export tree: nested tables of scalars and lists of scalars, with comments.

tomllib only reads, and tomli-w cannot write comments, which the export puts beside every value. The
subset written here (tables, strings, integers, floats, booleans, arrays of those) round-trips through
tomllib; tests/test_export.py checks that.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpudash.plain_text import one_line

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def key(name: str) -> str:
    return name if _BARE_KEY.match(name) else string(name)


def string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def comment_text(text: object) -> str:
    """Text for a comment: one line, control characters shown as escapes (TOML allows none in a comment, so a
    device name with a NUL or ESC in it would make the whole file unreadable)."""
    return one_line(text, 10_000)


def _comment(text: str | None) -> str:
    if not text:
        return ""
    return "  # " + comment_text(text)


def render(tree: dict[str, Any], comments: dict[str, str] | None = None, preamble: list[str] | None = None) -> str:
    """TOML text for `tree` (every top-level value a table); comments[dotted key] goes beside that value."""
    comments = comments or {}
    lines = [f"# {comment_text(line)}" for line in preamble or []]
    for name, table in tree.items():
        if not isinstance(table, dict):
            raise TypeError(f"top-level {name!r} must be a table")
        _table(lines, [name], table, comments)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(lines: list[str], path: list[str], table: dict[str, Any], comments: dict[str, str]) -> None:
    lines.append("")
    lines.append("[" + ".".join(key(p) for p in path) + "]")
    subtables = []
    for name, v in table.items():
        if isinstance(v, dict):
            subtables.append((name, v))
            continue
        dotted = ".".join(path + [name])
        lines.append(f"{key(name)} = {value(v)}{_comment(comments.get(dotted))}")
    for name, sub in subtables:
        _table(lines, path + [name], sub, comments)
