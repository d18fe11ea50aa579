"""A table redrawn from a whole new set of rows every reading, cheaply, without losing the user's place.

The monitor's tables change every second on every row, and Textual's DataTable re-renders every cell of
the table through Rich on any change (about 70 ms a reading for 8 GPUs and their processes: several
percent of a core at idle). This one is a line-API widget: each row is one rich Text rendered once into a
Strip and cached; a reading re-renders only the rows whose text changed and repaints only those lines.
The header stays on the first line while the rows scroll under it.

The cursor stays on the row it was on (by key) when rows come, go or reorder. Keys: up/down, page up/down,
home/end; enter (or a click on the highlighted row) posts RowSelected; a click on the header posts
HeaderSelected with the column's key. Cells are rich Text, never markup: a command line such as
`train.py --tags [a]` stays as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

CELL_SEGMENTS_KEPT = 4096  # cells' renderings kept (a few readings' worth of a large table), then begun anew
Row = tuple[str, Any]  # (row key, one Text per column, each as wide as its column; or what `cells_from` reads)


class LiveColumn(NamedTuple):
    key: str
    label: Text
    width: int


class LiveTable(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    LiveTable {
        width: 1fr;
        height: auto;
        scrollbar-size-vertical: 1;
        background: $surface;
        & > .live-table--header { text-style: bold; background: $panel; color: $foreground; }
        /* a grey cursor: the bars' own colours stay readable on the highlighted row */
        & > .live-table--cursor { background: $foreground 8%; }
        &:focus > .live-table--cursor { background: $foreground 20%; text-style: bold; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"live-table--header", "live-table--cursor"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(-1)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class RowHighlighted(Message):
        def __init__(self, table: LiveTable, row_key: str | None) -> None:
            super().__init__()
            self.table, self.row_key = table, row_key

        @property
        def control(self) -> LiveTable:
            return self.table

    class RowSelected(Message):
        def __init__(self, table: LiveTable, row_key: str) -> None:
            super().__init__()
            self.table, self.row_key = table, row_key

        @property
        def control(self) -> LiveTable:
            return self.table

    class HeaderSelected(Message):
        def __init__(self, table: LiveTable, column_key: str) -> None:
            super().__init__()
            self.table, self.column_key = table, column_key

        @property
        def control(self) -> LiveTable:
            return self.table

    def __init__(self, *, show_cursor: bool = True, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.show_cursor = show_cursor  # False: a read-only list (no row is highlighted)
        self.columns: list[LiveColumn] = []
        self._keys: list[str] = []
        self._cells: dict[str, Any] = {}  # row key -> what `show` was given for it
        self._strips: dict[str, Strip] = {}  # row key -> its rendered line (no cursor, no scroll)
        self._header_strip: Strip | None = None
        self._cell_segments: dict[tuple, list[Segment]] = {}  # a cell's rendering (see _line)
        self._styles: tuple[Style, Style, Style] | None = None  # base, header, cursor: resolved once
        self.rebuilds = 0  # for tests: how often the row set changed rather than only cell text

    # Data -----------------------------------------------------------------------------------------

    @property
    def row_keys(self) -> list[str]:
        return list(self._keys)

    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def highlighted_key(self) -> str | None:
        return self._keys[self.cursor_row] if 0 <= self.cursor_row < len(self._keys) else None

    def cells_of(self, key: str) -> list[Text]:
        return self.cells_from(self._cells[key]) if key in self._cells else []

    def cells_from(self, row: Any) -> list[Text]:
        """A row's cells as drawn. Rows are given as their Text cells; a subclass may give something cheaper
        to compare (its words, say) and build the cells here, for the rows that are drawn."""
        return row

    def show(self, columns: Sequence[LiveColumn], rows: Sequence[Row]) -> None:
        """The table's new content; only what changed is rendered and repainted."""
        was_on, was_at = self.highlighted_key, self.cursor_row
        columns = list(columns)
        keys = [key for key, _ in rows]
        if [(c.key, c.label, c.width) for c in columns] != [(c.key, c.label, c.width) for c in self.columns]:
            self.columns = columns
            self._header_strip = None
            self._strips.clear()
            self._changed_all()
        if keys != self._keys:
            self.rebuilds += 1
            self._changed_all()
        else:
            changed = [i for i, (key, cells) in enumerate(rows) if self._cells.get(key) != cells]
            for i in changed:
                self._strips.pop(rows[i][0], None)
            self._refresh_rows(changed)
        self._keys = keys
        self._cells = dict(rows)
        for key in list(self._strips):
            if key not in self._cells:
                del self._strips[key]
        self._set_virtual_size(Size(sum(c.width for c in self.columns), len(keys) + 1))
        if keys:
            index = keys.index(was_on) if was_on in keys else min(was_at, len(keys) - 1)
            if index != self.cursor_row or was_on != self.highlighted_key:
                self.cursor_row = index

    def _set_virtual_size(self, size: Size) -> None:
        """A new scroll range. Textual lays out the whole screen on any change of it; a table whose height the
        layout fixes (a process list of changing length in a 1fr panel) only needs its scrollbars updated, and
        those ask for a layout themselves when they appear or go."""
        if size == self.virtual_size:
            return
        height = self.styles.height
        if height is None or height.is_auto or not self.container_size:
            self.virtual_size = size  # the table's own height follows its rows
            return
        self.set_reactive(ScrollView.virtual_size, size)
        self._scroll_update(size)
        self.refresh()

    def move_to_key(self, key: str) -> bool:
        if key not in self._keys:
            return False
        self.cursor_row = self._keys.index(key)
        return True

    def _changed_all(self) -> None:
        self._strips.clear()
        self.refresh()

    def _refresh_row(self, index: int) -> None:
        self._refresh_rows([index])

    def _refresh_rows(self, indices: Sequence[int]) -> None:
        """Repaint the lines of these rows that are on screen (line 0 is the header); the view is read once."""
        top, height, width = round(self.scroll_y), self.size.height, self.size.width
        for index in indices:
            y = index + 1 - top
            if 1 <= y < height:
                self.refresh(Region(0, y, width, 1))

    # Cursor -----------------------------------------------------------------------------------------

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, len(self._keys) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)
        self._scroll_to_cursor()
        self.post_message(self.RowHighlighted(self, self.highlighted_key))

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1 - (1 if self.show_horizontal_scrollbar else 0))
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        self.cursor_row += step

    def action_page(self, step: int) -> None:
        self.cursor_row += step * max(1, self.size.height - 2)

    def action_edge(self, step: int) -> None:
        self.cursor_row = 0 if step < 0 else len(self._keys) - 1

    def action_select(self) -> None:
        key = self.highlighted_key
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x, left = event.x + round(self.scroll_x), 0
            for column in self.columns:
                if left <= x < left + column.width:
                    self.post_message(self.HeaderSelected(self, column.key))
                    return
                left += column.width
            return
        index = round(self.scroll_y) + event.y - 1
        if 0 <= index < len(self._keys):
            if index == self.cursor_row:
                self.action_select()
            self.cursor_row = index

    # Rendering --------------------------------------------------------------------------------------

    def on_focus(self) -> None:
        self._styles = None
        self._refresh_row(self.cursor_row)  # the cursor's colour says where the keys go

    def on_blur(self) -> None:
        self._styles = None
        self._refresh_row(self.cursor_row)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cell_segments.clear()  # a theme's colours (rich styles named by the theme) may have changed
        self._strips.clear()
        self._header_strip = None
        self._styles = None

    @property
    def line_styles(self) -> tuple[Style, Style, Style]:
        if self._styles is None:
            base = self.rich_style
            self._styles = (
                base,
                base + self.get_component_rich_style("live-table--header"),
                self.get_component_rich_style("live-table--cursor"),
            )
        return self._styles

    def _line(self, cells: Sequence[Text], style: Style) -> Strip:
        """A row's line: each cell rendered once and kept (CELL_SEGMENTS_KEPT) by its text, spans, style and
        width, since a new reading usually changes a few cells of a row (util, memory, power), not all."""
        segments: list[Segment] = []
        kept = self._cell_segments
        console = self.app.console
        for cell, column in zip(cells, self.columns):
            key = (cell.plain, tuple(cell.spans), cell.style, column.width)
            rendered = kept.get(key)
            if rendered is None:
                if cell.cell_len != column.width:  # each cell exactly as wide as its column
                    cell = cell.copy()
                    cell.truncate(column.width, overflow="ellipsis", pad=True)
                # assembled as the whole line was before: a Text without spans renders without its own style
                rendered = list(Text.assemble(cell, no_wrap=True, end="").render(console))
                if len(kept) >= CELL_SEGMENTS_KEPT:
                    kept.clear()
                kept[key] = rendered
            segments.extend(rendered)
        return Strip(segments or [Segment("")]).apply_style(style)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = round(self.scroll_x)
        base, header, cursor = self.line_styles
        if y == 0:
            if self._header_strip is None:
                self._header_strip = self._line([c.label for c in self.columns], header)
            return self._header_strip.crop_extend(scroll_x, scroll_x + width, header)
        index = round(self.scroll_y) + y - 1
        if not 0 <= index < len(self._keys):
            return Strip.blank(width, base)
        key = self._keys[index]
        if (
            index == self.cursor_row and self.show_cursor
        ):  # drawn on the cursor's colours; the cells' own colours stay on top
            return self._line(self.cells_of(key), base + cursor).crop_extend(scroll_x, scroll_x + width, base + cursor)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._line(self.cells_of(key), base)
        return strip.crop_extend(scroll_x, scroll_x + width, base)
