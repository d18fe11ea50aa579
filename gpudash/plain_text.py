"""Text from outside gpudash (a plugin's messages and output) made safe to print and to put in JSON.

Control characters could move the cursor, recolour or clear the user's terminal, or hide text (a carriage
return, an escape sequence, a right-to-left override); lone surrogates cannot be encoded at all. Each such
character is shown as its escape (`\\x1b`, `\\u202e`) instead, so what was there stays visible. Length is
bounded: a message meant for one line must not fill a screen or a JSON file.
"""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 controls and DEL; the bidirectional embedding, override and isolate controls; lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEPING_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ELLIPSIS = "…"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str, limit: int, *, lines: bool = False, keep_end: bool = False) -> str:
    """`text` with unsafe characters escaped, cut to at most `limit` characters (the cut marked with …).

    `lines=True` keeps newlines and tabs, for multi-line output such as the tail of what a child printed;
    `keep_end=True` cuts the beginning instead of the end.
    """
    pattern = _UNSAFE_KEEPING_LINES if lines else _UNSAFE
    out = pattern.sub(_escape, text)
    if len(out) > limit:
        keep = max(0, limit - 1)
        out = ELLIPSIS + out[len(out) - keep :] if keep_end else out[:keep] + ELLIPSIS
    return out


def one_line(text: Any, limit: int = 1000) -> str:
    """Any message from outside as one safe line: whitespace runs (newlines too) become one space."""
    return clean(" ".join(str(text).split()), limit)
