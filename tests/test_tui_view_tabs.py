"""The dashboard's own title row and tab bar (gpudash.tui.widgets.title_bar, .view_tabs): one widget each where
Textual's Header and TabbedContent mounted 24, with their look and their mouse and keyboard ways."""

from __future__ import annotations

from test_tui import fast_config, gpu, machine_of
from textual.command import CommandPalette
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.models import Sample
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.title_bar import TitleBar
from gpudash.tui.widgets.view_tabs import TabBar, ViewPane, ViewTabs


def app_of():
    return create_app(machine_of([gpu()], Sample(utilization_pct=1)), fast_config(), add_torch_view=no_torch)


def label_x(bar: TabBar, pane_id: str) -> int:
    return next(a + 1 for p, a, _ in bar.spans() if p == pane_id)  # the label's first letter


async def test_a_click_on_a_label_shows_its_view_built_on_first_showing():
    app = app_of()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.focused, DeviceTable), timeout=5.0)
        tabs = app.query_one("#views", ViewTabs)
        assert [p.id for p in app.query(ViewPane)] == ["view-dashboard"]  # the other views: not built yet
        lines = screen_text(app).splitlines()
        assert lines[2].split() == [v.title for v in app.views]  # under the title and source rows
        bar = app.query_one(TabBar)
        await pilot.click(TabBar, offset=(label_x(bar, "view-checks"), 0))
        await wait_until(pilot, lambda: app.query("#checks-table"), timeout=5.0)
        assert tabs.active == "view-checks" and bar.active == "view-checks"
        await wait_until(pilot, lambda: app.focused is not None and "checks" in str(app.focused.id), timeout=5.0)
        assert not app.query_one("#view-dashboard").display
        # The underline's highlight sits under the active label: the row below it, from its padding to its end.
        start, end = next((a, b) for p, a, b in bar.spans() if p == "view-checks")
        underline = screen_text(app).splitlines()[3]
        assert set(underline[start + 1 : end - 1]) == {"━"}
        await pilot.click(TabBar, offset=(label_x(bar, "view-dashboard"), 0))
        await wait_until(pilot, lambda: isinstance(app.focused, DeviceTable), timeout=5.0)
        assert tabs.active == "view-dashboard" and app.query_one("#view-dashboard").display


async def test_the_focused_tab_bar_steps_with_left_and_right():
    app = app_of()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.focused, DeviceTable), timeout=5.0)
        bar = app.query_one(TabBar)
        bar.focus()
        await wait_until(pilot, lambda: app.focused is bar, timeout=5.0)
        await pilot.press("left")  # from the first tab round to the last
        tabs = app.query_one("#views", ViewTabs)
        await wait_until(pilot, lambda: tabs.active == app.views[-1].pane_id, timeout=5.0)
        bar.focus()  # the view shown took the focus
        await wait_until(pilot, lambda: app.focused is bar, timeout=5.0)
        await pilot.press("right")
        await wait_until(pilot, lambda: tabs.active == app.views[0].pane_id, timeout=5.0)


async def test_short_terminal_has_one_row_of_tabs_and_no_title_row():
    app = app_of()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        await pilot.pause(0.1)
        assert not app.query_one(TitleBar).display
        assert app.query_one(TabBar).size.height == 1
        lines = screen_text(app).splitlines()
        assert lines[1].split()[:3] == ["Dashboard", "Recommendations", "Checks"]  # under the source row
        assert "━" not in lines[1] + lines[2]


async def test_title_row_shows_the_subtitle_and_its_icon_opens_the_palette():
    app = app_of()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        title = screen_text(app).splitlines()[0]
        assert title.lstrip().startswith("●") and f"gpudash — {app.sub_title}" in title
        assert title.index("gpudash") > 8  # centred, right of the icon's 8 columns
        await pilot.press("p")  # pause: the subtitle says so, and the row follows
        await wait_until(pilot, lambda: "paused" in screen_text(app).splitlines()[0], timeout=5.0)
        await pilot.click(TitleBar, offset=(1, 0))
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), timeout=5.0)


async def test_first_focus_is_the_device_table_and_a_view_switched_under_help_gets_it_back():
    app = app_of()
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.focused is not None, timeout=5.0)
        assert isinstance(app.focused, DeviceTable)  # never the tab bar first
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: app.screen is not app.screen_stack[0], timeout=5.0)
        app.action_show_view("checks")  # e.g. from the command palette, with help on top
        await wait_until(pilot, lambda: app.view("checks") is not None, timeout=5.0)
        await pilot.press("escape")
        checks = app.query_one("#views", ViewTabs).get_pane("view-checks")
        await wait_until(pilot, lambda: app.focused is not None and checks in app.focused.ancestors, timeout=5.0)


async def test_labels_wider_than_the_terminal_scroll_to_keep_the_shown_view_in_sight():
    app = app_of()
    async with app.run_test(size=(50, 24)) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        bar = app.query_one(TabBar)
        assert screen_text(app).splitlines()[1].split()[0] == "Dashboard"  # from the start: no scroll needed
        app.action_show_view("fleet")
        await wait_until(pilot, lambda: bar.active == "view-fleet", timeout=5.0)
        await pilot.pause()
        row = screen_text(app).splitlines()[1]
        assert row.rstrip().endswith("Fleet") and "Dashboard" not in row  # scrolled so the shown label is whole
        await pilot.click(TabBar, offset=(row.index("Benchmarks") + 1, 0))  # clicks land on the label shown
        await wait_until(pilot, lambda: bar.active == "view-bench", timeout=5.0)
