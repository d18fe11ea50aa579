"""The dashboard's Fleet tab under Pilot, over real local endpoints: rows per host and GPU, the host that is
down with its error, Enter to drill down, Escape to come back."""

from __future__ import annotations

import time

import pytest
from servers import DGX, REPO, free_port, gpudash_serve
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.fleet.scrape import Scraper
from gpudash.tui.app import create_app
from gpudash.tui.widgets.fleet_table import FleetTable

pytestmark = pytest.mark.light
SIZE = (170, 50)
MIG_ROWS = 4  # the DGX example's GPU 7 has 4 MIG instances: rows of their own under it


def hostport(url: str) -> str:
    return url.split("://")[1].split("/")[0]


def fleet_app(hosts: list[str], **fleet: object):
    """The dashboard on the 8-GPU replay with `[fleet] hosts` and other [fleet] settings."""
    config = defaults()
    config["fleet"]["hosts"] = hosts
    config["fleet"].update(fleet)
    return create_app(discover(replay=str(DGX)), config, add_torch_view=no_torch)


async def test_fleet_tab_shows_hosts_drills_down_and_comes_back():
    down = f"127.0.0.1:{free_port()}"
    with (
        gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _),
        gpudash_serve("--replay", str(REPO / "examples/snapshots/mi300x.json"), "--hostname", "node-b[/]") as (b, _),
    ):
        app = fleet_app([hostport(a), hostport(b), down], timeout_s=2.0, interval=30.0)  # rounds when asked
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f")
            await wait_until(pilot, lambda: "3 hosts: 2 up, 1 unreachable" in screen_text(app), timeout=20)
            # The status line and the table repaint separately: the table's rows may land a frame later.
            await wait_until(pilot, lambda: "AMD Instinct MI300X" in screen_text(app), timeout=5)
            text = screen_text(app)
            assert "node-a" in text and "node-b[/]" in text  # another machine's words, never markup
            assert f"{down}: connection refused" in text
            table = app.query_one("#fleet-table", FleetTable)
            assert table.row_count == 8 + MIG_ROWS + 1 + 1
            table.focus()
            await pilot.press("enter")  # the cursor is on the first row: the unreachable host
            await wait_until(
                pilot, lambda: "showing 127.0.0.1" in (t := screen_text(app)) and "error: " in t, timeout=10
            )
            assert table.row_count == 1
            await pilot.press("escape")
            await wait_until(pilot, lambda: table.row_count == 10 + MIG_ROWS, timeout=10)
            table.cursor_row = 1
            await pilot.press("enter")
            await wait_until(pilot, lambda: "node-a: up (replayed)" in screen_text(app), timeout=10)
            assert table.row_count == 8 + MIG_ROWS
            await wait_until(pilot, lambda: "nvidia:0 utilisation, last" in screen_text(app), timeout=15)
            await pilot.resize_terminal(100, 40)  # the name column gives way at once, not at the next round
            await pilot.pause(0.5)
            header = next(line for line in screen_text(app).splitlines() if "host" in line and "status" in line)
            assert header.rstrip().endswith("amp dtype")


async def test_fleet_tab_without_a_fleet_says_how_to_configure_one():
    app = create_app(discover(replay=str(DGX)), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await wait_until(pilot, lambda: "No fleet configured" in screen_text(app), timeout=10)


async def test_a_round_that_fails_to_show_says_so_and_the_rounds_go_on(monkeypatch):
    shown = FleetTable.show_hosts
    calls = []

    def first_fails(self, hosts):
        calls.append(len(hosts))
        if len(calls) == 1:
            raise RuntimeError("drawing broke")
        shown(self, hosts)

    monkeypatch.setattr(FleetTable, "show_hosts", first_fails)
    rounds = []
    original_round = Scraper.round

    def first_is_slow(self):
        rounds.append(1)
        if len(rounds) == 1:
            time.sleep(1.5)  # longer than the interval: the next round is due the moment this one lands
        return original_round(self)

    monkeypatch.setattr(Scraper, "round", first_is_slow)
    with gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _):
        app = fleet_app([hostport(a)], interval=1.0)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f")
            await wait_until(pilot, lambda: "fleet: RuntimeError: drawing broke" in screen_text(app), timeout=20)
            await wait_until(
                pilot, lambda: "1 host: 1 up" in (text := screen_text(app)) and "node-a" in text, timeout=20
            )


async def test_fleet_tab_shows_totals_and_takes_a_filter():
    """Totals of the hosts shown under the status line; `/` takes a filter in the command's grammar (a bad one
    is its one line, the last good one stays), applied to every round until an empty one clears it."""
    from servers import exposition_server
    from test_fleet_operators import gpudash_page
    from textual.widgets import Input

    with (
        exposition_server(gpudash_page("dgx-01", [60, 91])) as (a, _),
        exposition_server(gpudash_page("node-07", [50])) as (b, _),
    ):
        app = fleet_app([hostport(a), hostport(b)], timeout_s=5.0, interval=30.0)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f")
            totals = app.query_one("#fleet-totals")
            table = app.query_one("#fleet-table", FleetTable)
            await wait_until(pilot, lambda: "totals: 3 GPUs" in str(totals.render()), timeout=20)
            assert "power 1.50 kW" in str(totals.render()) and table.row_count == 3
            box = app.query_one("#fleet-filter", Input)
            await pilot.press("slash")
            assert box.has_focus
            box.value = "temp>85 host~=dgx"  # typed: its keys' names (greater_than_sign, tilde) aside
            await pilot.press("enter")
            await wait_until(pilot, lambda: table.row_count == 1, timeout=10)
            assert "totals: 1 GPUs" in str(totals.render()) and "filter: temp>85 host~=dgx" in str(totals.render())
            assert "dgx-01" in screen_text(app) and "node-07" not in screen_text(app)
            await pilot.press("slash")
            box.value = "heat>1"
            await pilot.press("enter")
            await wait_until(pilot, lambda: "unknown field 'heat'" in str(totals.render()), timeout=10)
            assert table.row_count == 1  # the last good filter stays
            box.value = ""
            await pilot.press("enter")
            await wait_until(pilot, lambda: table.row_count == 3, timeout=10)
