"""A DataTable that shows its words as they are.

Textual reads a str cell or column label as Rich markup: a plugin's check summary, a plugin's name or a
config value holding "[/]" would raise MarkupError while the table draws and end the dashboard, and "[red]"
would recolour the cell. Every view's DataTable is this one, so str cells and labels become plain Text.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, ColumnKey, RowKey


def _plain(value: Any) -> Any:
    return Text(value) if isinstance(value, str) else value


class PlainTable(DataTable[Any]):
    def add_column(
        self, label: Any, *, width: int | None = None, key: str | None = None, default: Any = None
    ) -> ColumnKey:
        return super().add_column(_plain(label), width=width, key=key, default=_plain(default))

    def add_row(self, *cells: CellType, height: int | None = 1, key: str | None = None, label: Any = None) -> RowKey:
        return super().add_row(*map(_plain, cells), height=height, key=key, label=_plain(label))

    def update_cell(
        self, row_key: RowKey | str, column_key: ColumnKey | str, value: CellType, *, update_width: bool = False
    ) -> None:
        super().update_cell(row_key, column_key, _plain(value), update_width=update_width)
