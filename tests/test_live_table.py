"""LiveTable's scroll range as a user sees it: a list that grows past its panel gets a scrollbar and scrolls to
its last row; one that shrinks back loses the scrollbar, scrolls back to the top and draws no stale rows."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from tui_helpers import screen_text

from gpudash.tui.widgets.live_table import LiveColumn, LiveTable

pytestmark = pytest.mark.light

COLUMNS = [LiveColumn("name", Text("NAME"), 20)]


def rows(count: int, prefix: str = "proc") -> list[tuple[str, list[Text]]]:
    return [(f"{prefix}{i}", [Text(f"{prefix}-{i:03d}".ljust(20))]) for i in range(count)]


class Panel(App):
    CSS = "LiveTable { height: 10; }"  # fixed, as the process list in its 1fr panel

    def compose(self) -> ComposeResult:
        yield LiveTable(id="table")


async def test_a_list_that_grows_scrolls_and_one_that_shrinks_draws_no_stale_rows():
    app = Panel()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(LiveTable)
        table.show(COLUMNS, rows(4))
        await pilot.pause(0.1)
        assert not table.show_vertical_scrollbar and "proc-003" in screen_text(app)

        table.show(COLUMNS, rows(30))  # the list outgrows the panel: a scrollbar, and the end is reachable
        await pilot.pause(0.1)
        assert table.show_vertical_scrollbar and table.max_scroll_y == 31 - 10
        table.focus()
        await pilot.press("end")
        await pilot.pause(0.1)
        assert "proc-029" in screen_text(app) and "proc-000" not in screen_text(app)

        table.show(COLUMNS, rows(3, "new"))  # shorter than the panel again, while scrolled to the end
        await pilot.pause(0.1)
        text = screen_text(app)
        assert not table.show_vertical_scrollbar and table.scroll_y == 0
        assert all(f"new-{i:03d}" in text for i in range(3)) and "proc-" not in text

        table.show(COLUMNS, rows(8, "mid"))  # longer, still within the panel: every row drawn
        await pilot.pause(0.1)
        text = screen_text(app)
        assert not table.show_vertical_scrollbar and all(f"mid-{i:03d}" in text for i in range(8))


async def test_an_auto_height_table_grows_with_its_rows():
    class Auto(App):
        def compose(self) -> ComposeResult:
            yield LiveTable(id="table")

    app = Auto()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(LiveTable)
        table.show(COLUMNS, rows(2))
        await pilot.pause(0.1)
        assert table.size.height == 3
        table.show(COLUMNS, rows(6))
        await pilot.pause(0.1)
        assert table.size.height == 7 and "proc-005" in screen_text(app)
