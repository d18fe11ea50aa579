"""LiveTable's scroll range as a user sees it: a list that grows past its panel gets a scrollbar and scrolls to
its last row; one that shrinks back loses the scrollbar, scrolls back to the top and draws no stale rows."""

from __future__ import annotations

import pytest
from rich.style import Style
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


async def test_a_reading_renders_only_the_cells_that_changed_and_cells_keep_their_own_style(monkeypatch):
    columns = [LiveColumn("pid", Text("PID"), 8), LiveColumn("mem", Text("MEM"), 8), LiveColumn("cmd", Text("CMD"), 12)]
    muted = Style(dim=True, italic=True)

    def row(mem: str) -> list[tuple[str, list[Text]]]:
        return [("p", [Text(" 4242".ljust(8)), Text(f" {mem}".ljust(8), style=muted), Text(" python".ljust(12))])]

    rendered: list[str] = []
    assemble = Text.assemble

    def counted(*parts, **kwargs):
        rendered.extend(p.plain for p in parts if isinstance(p, Text))
        return assemble(*parts, **kwargs)

    app = Panel()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(LiveTable)
        table.show(columns, row("n/a"))
        await pilot.pause(0.1)
        monkeypatch.setattr(Text, "assemble", counted)
        table.show(columns, row("3.5G"))
        await pilot.pause(0.1)
        assert [cell.strip() for cell in rendered] == ["3.5G"]  # pid and command: their earlier rendering
        line = table.render_line(1)
        assert "3.5G" in line.text
        assert any(seg.text.strip() == "3.5G" and seg.style and seg.style.dim for seg in line)  # the cell's style
