"""Which columns of a table fit a width, dropping whole columns in a stated order rather than cutting cells.

A table cut at the screen's edge changes what it says: a peak of "66,900" shown as "6", "bf16-mixed" as
"bf16-mix". Faces ask here which columns to keep and say which were left out (a marker naming them), so
every figure on screen is whole.
"""

from __future__ import annotations

from collections.abc import Sequence


def column_widths(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column as wide as its widest cell or title."""
    return [max([len(title)] + [len(row[i]) for row in rows if i < len(row)]) for i, title in enumerate(header)]


def fit_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    drop_order: Sequence[str],
    *,
    gap: int = 2,
    marker: int = 0,
) -> tuple[list[int], list[str]]:
    """The indices of the columns to show, in their order, and the titles of those left out, in `drop_order`.

    Each column takes its widest cell plus `gap`; `marker` columns are kept free for the marker naming what
    was dropped (only once something is). Columns not in `drop_order` are never dropped."""
    widths = column_widths(header, rows)
    kept = list(range(len(header)))
    dropped: list[str] = []
    for title in drop_order:
        if sum(widths[i] + gap for i in kept) + (marker if dropped else 0) <= width:
            break
        if title in header:
            kept.remove(header.index(title))
            dropped.append(title)
    return kept, dropped  # the columns that cannot go stay even when too wide: the face's scroll shows them


def dropped_marker(dropped: Sequence[str]) -> str:
    """The marker a table shows when columns are left out: "+3›" (the key that shows them is the face's)."""
    return f"+{len(dropped)}›" if dropped else ""
