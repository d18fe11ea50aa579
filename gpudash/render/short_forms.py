"""Short forms a face uses on purpose when a sentence does not fit its line, instead of a cut mid-word.

Two forms, both documented in docs/cli.md ("Narrow terminals"): an aside in parentheses at the end is left
out ("host load not recorded (replayed: ...)" -> "host load not recorded"), and a summary whose whole text is
shown elsewhere on the same screen ends at a word, with "…" ("8 GPUs present …").
"""

from __future__ import annotations


def without_aside(text: str) -> str:
    """The text without a trailing "(...)" aside; unchanged when it has none."""
    if text.endswith(")") and " (" in text:
        return text[: text.rindex(" (")]
    return text


def at_word(text: str, width: int) -> str:
    """At most `width` columns, ending at a whole word followed by "…" when cut (a single word longer than
    the line is cut with "…": nothing shorter says more). Only for text shown whole elsewhere on screen."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = text[: width - 1]
    if not head.endswith(" ") and text[width - 1] != " " and " " in head.strip():  # a cut word: left out
        head = head[: head.rstrip().rindex(" ")]
    return head.rstrip(" ,;:·-") + "…"
