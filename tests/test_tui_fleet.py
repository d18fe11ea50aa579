"""The dashboard's Fleet tab under Pilot, over real local endpoints: rows per host and GPU, the host that is
down with its error, Enter to drill down, Escape to come back."""

from __future__ import annotations

import contextlib
import time
import weakref

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
            down_line = next(line for line in text.splitlines() if line.split()[:1] == [down])
            assert down_line.split()[1:] == ["unreachable", "–", "–", "connection", "refused"]  # its name said once
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


async def test_over_prometheus_the_tab_alone_freezes_what_a_round_keeps():
    """The tab's round worker freezes (or reclaims) once a round is prepared (gc_pause); the Prometheus source it
    opens is told not to freeze as well, which would walk the round's young objects a second time."""
    from gpudash.tui.screens.fleet_view import FleetView

    config = defaults()
    config["fleet"]["prometheus"] = f"127.0.0.1:{free_port()}"  # nothing listens: the round fails, and says so
    app = create_app(discover(replay=str(DGX)), config, add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        view = app.query_one(FleetView)
        await wait_until(pilot, lambda: view._source is not None, timeout=10)
        assert type(view._source).__name__ == "PrometheusSource" and view._source.refreezes is False


async def test_fleet_tab_without_a_fleet_says_how_to_configure_one():
    app = create_app(discover(replay=str(DGX)), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f")
        await wait_until(pilot, lambda: "No fleet configured" in screen_text(app), timeout=10)


async def test_a_round_that_fails_to_show_says_so_and_the_rounds_go_on(monkeypatch):
    shown = FleetTable.show_rows
    calls = []

    def first_fails(self, rows):
        calls.append(len(rows.rows))
        if len(calls) == 1:
            raise RuntimeError("drawing broke")
        shown(self, rows)

    monkeypatch.setattr(FleetTable, "show_rows", first_fails)
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


@contextlib.contextmanager
def two_hosts(node_07_temps: list[int]):
    """A Fleet-tab app over two gpudash pages on 127.0.0.1: dgx-01 with two GPUs at 60 and 91 °C, node-07 with
    one GPU a temperature each of `node_07_temps`."""
    from servers import exposition_server
    from test_fleet_operators import gpudash_page

    with (
        exposition_server(gpudash_page("dgx-01", [60, 91])) as (a, _),
        exposition_server(gpudash_page("node-07", node_07_temps)) as (b, _),
    ):
        yield fleet_app([hostport(a), hostport(b)], timeout_s=5.0, interval=30.0)


async def test_fleet_tab_shows_totals_and_takes_a_filter():
    """Totals of the hosts shown under the status line; `/` takes a filter in the command's grammar (a bad one
    is its one line, the last good one stays), applied to every round until an empty one clears it."""
    from textual.widgets import Input

    with two_hosts(node_07_temps=[50]) as app:
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


async def test_fleet_tab_marks_drift_sums_users_and_jobs_and_sorts_at_80x24():
    """The operators' view of `gpudash fleet` in the tab, at 80x24: a drift column marking the odd host whole, the
    drift, GPU memory by user and job under the table, and `s` cycling the sort through the command's keys (the
    table's order is sort_hosts' for the same round)."""
    from servers import exposition_server
    from test_fleet_operators import gpudash_page

    from gpudash.fleet.filter import SORTS, sort_hosts

    with (
        exposition_server(gpudash_page("dgx-01", [60, 91])) as (a, _),
        exposition_server(gpudash_page("node-07", [95], driver="535.183.01")) as (b, _),
        exposition_server(gpudash_page("node-08", [50])) as (c, _),
    ):
        app = fleet_app([hostport(a), hostport(b), hostport(c)], timeout_s=5.0, interval=30.0)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f")
            view = app.query_one("#fleet")
            table = app.query_one("#fleet-table", FleetTable)
            await wait_until(pilot, lambda: table.row_count == 4 and "GPU memory by job" in screen_text(app), 20)
            text = screen_text(app)
            lines = text.splitlines()
            header = next(line for line in lines if " status " in line and " device " in line)
            assert " drift " in header
            odd = next(line for line in lines if line.strip().startswith("node-07"))
            assert " ≠driver " in odd  # whole, left of the name column that gives way
            assert not any(line.strip().startswith(h) and "≠" in line for line in lines for h in ("dgx-01", "node-08"))
            words = " ".join(text.split())  # a wrapped line read whole
            assert "drift: driver (nvidia hosts) 550.54.15 on most of 3 hosts; odd: node-07 535.183.01" in words
            assert "GPU memory by user: carol 18.0 GiB on 3 GPUs" in words
            assert "GPU memory by job: 4711 18.0 GiB on 3 GPUs" in words

            def order() -> list[str]:
                return list(dict.fromkeys(table.host_of[key] for key in table.row_keys))

            assert order() == ["dgx-01", "node-07", "node-08"]
            table.focus()
            for key in SORTS[1:] + SORTS[:1]:  # s cycles every key of --sort, back to host
                await pilot.press("s")
                assert view.sort == key
                want = [h.name for h in sort_hosts(view.fleet, key).hosts]
                await wait_until(pilot, lambda want=want: order() == want, 5)
                totals = str(app.query_one("#fleet-totals").render())
                assert (f"sort: {key}" in totals) == (key != "host")
                if key == "temp":
                    assert want == ["node-07", "dgx-01", "node-08"]  # the hottest GPU first


async def test_fleet_tab_at_80x24_keeps_host_names_apart_and_the_readings_whole():
    """Cluster names (node-a017.cluster.example.com) at 80x24: the shared domain is left out with a mark the
    status line names, each host keeps a name of its own, and the readings after the name column stay whole."""
    from servers import exposition_server
    from test_fleet_operators import gpudash_page

    names = ["node-a017.cluster.example.com", "node-a018.cluster.example.com"]
    with (
        exposition_server(gpudash_page(names[0], [60, 91])) as (a, _),
        exposition_server(gpudash_page(names[1], [50])) as (b, _),
    ):
        app = fleet_app([hostport(a), hostport(b)], timeout_s=5.0, interval=30.0)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f")
            table = app.query_one("#fleet-table", FleetTable)
            legend = "host names: .… = .cluster.example.com"  # the status line's, once the table has said it
            await wait_until(
                pilot,
                lambda: table.row_count == 3 and "node-a018" in screen_text(app) and legend in squeezed(app),
                20,
            )
            lines = screen_text(app).splitlines()
            first = [next(line.split()[0] for line in lines if line.strip().startswith(n[:9])) for n in names]
            assert first == ["node-a017.…", "node-a018.…"]  # apart, and each its own host's
            row = next(line for line in lines if line.strip().startswith("node-a018"))
            assert "50%" in row and "10.0 / 80.0 GiB" in row and "50 C" in row and "500 W" in row
            table.focus()
            table.cursor_row = 2
            await pilot.press("enter")  # the whole name, drilled into
            await wait_until(pilot, lambda: f"showing {names[1]}" in squeezed(app), timeout=10)


def squeezed(app) -> str:
    """The screen's words on one line, one space between them (the status line wraps at 80 columns)."""
    return " ".join(screen_text(app).split())


def test_the_lines_under_the_table_name_a_few_and_count_the_rest():
    from gpudash.fleet.drift import Drift
    from gpudash.fleet.model import FleetRound, Host, Usage
    from gpudash.render.fleet_summary import MOST, summary_lines

    gib = 2**30
    users = [Usage(gpu=f"GPU-{i}", memory_bytes=(10 - i) * gib, user=f"user{i}") for i in range(5)]
    fleet = FleetRound({"kind": "hosts", "targets": 1}, [Host("h1", "up", usage=users)], 0.0, 0.1, 5.0)
    odd = {f"h{i}": "535" for i in range(5)}
    drifts = [Drift(fact, "nvidia", "550", dict(odd), 9) for fact in ("driver", "cuda", "torch", "gpudash")]
    lines = summary_lines(fleet, drifts)
    assert lines[0] == "drift: driver (nvidia hosts) 550 on most of 9 hosts; odd: h0 535, h1 535, h2 535 (+2 more)"
    assert len([line for line in lines if line.startswith("drift: ")]) == MOST + 1
    assert lines[MOST] == "drift: 1 more facts differ (gpudash); the drift column marks the hosts"
    assert lines[-1] == (
        "GPU memory by user: user0 10.0 GiB on 1 GPU; user1 9.0 GiB on 1 GPU; user2 8.0 GiB on 1 GPU (+2 more)"
    )
    assert summary_lines(FleetRound({}, [Host("h1", "up")], 0.0, 0.1, 5.0), []) == []


async def test_fleet_tab_at_80x24_shows_gpu_models_without_the_vendor_word():
    """At 80 columns the name column drops the vendor's word as the dashboard's device rows do (render.monitor's
    short_name: "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3") before the column gives way, instead of cutting the
    model to "NVIDIA …"; wide enough, the whole model name."""
    from servers import exposition_server
    from test_fleet_operators import gpudash_page

    down = f"127.0.0.1:{free_port()}"
    with exposition_server(gpudash_page("dgx-01", [60, 91])) as (a, _):
        app = fleet_app([hostport(a), down], timeout_s=5.0, interval=30.0)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f")
            table = app.query_one("#fleet-table", FleetTable)
            await wait_until(pilot, lambda: table.row_count == 3 and "dgx-01" in screen_text(app), 20)
            lines = screen_text(app).splitlines()
            rows = [line for line in lines if " nvidia:" in line]
            # Cut, as the name column is at its narrowest here, but from the model's distinguishing part.
            assert len(rows) == 2 and all(" H100 80… " in row and "NVIDIA" not in row for row in rows), rows
            assert table.short_names
            await pilot.resize_terminal(170, 50)
            await wait_until(pilot, lambda: "NVIDIA H100 80GB HBM3" in screen_text(app), timeout=10)
            assert not table.short_names


@contextlib.asynccontextmanager
async def fleet_tab_of_one_host():
    """The Fleet tab shown over one `gpudash serve` of the DGX example on 127.0.0.1, rounds every second, once
    its first round is on the screen: (app, pilot, the tab's view)."""
    with gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _):
        app = fleet_app([hostport(a)], interval=1.0)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f")
            await wait_until(pilot, lambda: "1 host: 1 up" in screen_text(app), timeout=20)
            yield app, pilot, app.query_one("#fleet")


def cycle_each_round(monkeypatch) -> weakref.WeakSet:
    """Each Scraper round makes a reference cycle, alive through that round and the next's start and garbage
    after: frozen by the round's refreeze, freed only by a reclaim. The set holds the ones still alive."""
    alive: weakref.WeakSet = weakref.WeakSet()
    holder: list = []
    original_round = Scraper.round

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    def round_with_a_cycle(self):
        cycle = Cycle()
        alive.add(cycle)
        holder[:] = [cycle]
        return original_round(self)

    monkeypatch.setattr(Scraper, "round", round_with_a_cycle)
    return alive


async def test_fleet_tab_frees_the_cycles_rounds_froze_while_no_key_comes(monkeypatch):
    """Each round freezes what is alive (gpudash.fleet.gc_pause.refreeze); a reference cycle alive then and
    garbage after is only freed by the tab's reclaim (a full collection while no key has come for a while).
    With it due every round: at most the last rounds' cycles live. With a key just pressed: none is freed."""
    from gpudash.tui.screens import fleet_view

    alive = cycle_each_round(monkeypatch)
    monkeypatch.setattr(fleet_view, "RECLAIM_EVERY_S", 0.0)
    monkeypatch.setattr(fleet_view, "RECLAIM_IDLE_S", 0.0)
    async with fleet_tab_of_one_host() as (app, pilot, view):
        counted: list[int] = []
        start = len(alive)
        for _ in range(4):  # four more rounds, each freeing what the one before it froze
            before = view.fleet
            await wait_until(pilot, lambda before=before: view.fleet is not before, timeout=20)
            counted.append(len(alive))
        assert max(counted) <= max(2, start), counted
        # Due (a period and a half since the last) but not overdue: a key an hour ago would defer it.
        monkeypatch.setattr(fleet_view, "RECLAIM_EVERY_S", 1000.0)
        monkeypatch.setattr(fleet_view, "RECLAIM_IDLE_S", 3600.0)
        before = view.fleet
        await wait_until(pilot, lambda: view.fleet is not before, timeout=20)  # none in flight reclaims now
        view._reclaimed = time.monotonic() - 1500.0
        app.query_one("#fleet-table", FleetTable).focus()
        await pilot.press("down")
        first = len(alive)
        for _ in range(3):
            before = view.fleet
            await wait_until(pilot, lambda before=before: view.fleet is not before, timeout=20)
        assert len(alive) >= first + 3  # frozen, never collected: the key deferred the reclaim
        await pilot.press("slash")
        typed = view._last_key
        await pilot.press("t")  # a key the filter box keeps to itself is counted too
        assert view._last_key > typed


def test_reclaim_is_put_off_by_keys_only_so_long(monkeypatch):
    """The rule (fleet_view.reclaim_due): due once a period is over and no key came for RECLAIM_IDLE_S; from
    RECLAIM_SOONER_AFTER periods a shorter quiet gap will do; from RECLAIM_ANYWAY_AFTER periods, keys or not."""
    from gpudash.tui.screens import fleet_view
    from gpudash.tui.screens.fleet_view import reclaim_due

    every = fleet_view.RECLAIM_EVERY_S
    assert not reclaim_due(every - 1, 1e9)  # not due
    assert reclaim_due(every, fleet_view.RECLAIM_IDLE_S) and not reclaim_due(every, fleet_view.RECLAIM_IDLE_S - 0.1)
    overdue = fleet_view.RECLAIM_SOONER_AFTER * every
    assert fleet_view.RECLAIM_SOONER_IDLE_S < fleet_view.RECLAIM_IDLE_S
    assert not reclaim_due(overdue - 1, fleet_view.RECLAIM_SOONER_IDLE_S)
    assert reclaim_due(overdue, fleet_view.RECLAIM_SOONER_IDLE_S)
    assert not reclaim_due(overdue, fleet_view.RECLAIM_SOONER_IDLE_S - 0.1)
    anyway = fleet_view.RECLAIM_ANYWAY_AFTER * every
    assert not reclaim_due(anyway - 1, 0.0) and reclaim_due(anyway, 0.0)  # a key this instant, even


async def test_fleet_tab_reclaims_past_the_bound_while_keys_keep_coming(monkeypatch):
    """Keys that never leave a quiet gap put the reclaim off, but past RECLAIM_ANYWAY_AFTER periods the next
    round runs it anyway: the cycles earlier rounds froze are freed (without the bound they all stay)."""
    from gpudash.tui.screens import fleet_view

    alive = cycle_each_round(monkeypatch)
    monkeypatch.setattr(fleet_view, "RECLAIM_EVERY_S", 1000.0)
    monkeypatch.setattr(fleet_view, "RECLAIM_IDLE_S", 3600.0)  # a key within the hour defers it...
    monkeypatch.setattr(fleet_view, "RECLAIM_SOONER_IDLE_S", 3600.0)  # ...overdue too: only the bound is left
    async with fleet_tab_of_one_host() as (app, pilot, view):
        app.query_one("#fleet-table", FleetTable).focus()
        await pilot.press("down")  # a key: the reclaim is put off
        for _ in range(3):
            before = view.fleet
            await wait_until(pilot, lambda before=before: view.fleet is not before, timeout=20)
        piled = len(alive)
        assert piled >= 3  # frozen, not freed: no reclaim is due
        stamp = view._reclaimed = time.monotonic() - 2.5 * fleet_view.RECLAIM_EVERY_S  # overdue, keys coming
        await pilot.press("up")
        before = view.fleet
        await wait_until(pilot, lambda: view.fleet is not before, timeout=20)
        assert view._reclaimed == stamp and len(alive) >= piled  # between the bounds: still put off
        frozen = [weakref.ref(cycle) for cycle in list(alive)]
        assert len(frozen) >= piled
        view._reclaimed = time.monotonic() - fleet_view.RECLAIM_ANYWAY_AFTER * fleet_view.RECLAIM_EVERY_S
        await pilot.press("down")
        await wait_until(pilot, lambda: time.monotonic() - view._reclaimed < 60, timeout=20)
        left = [ref for ref in frozen if ref() is not None]
        assert len(left) <= 1, len(left)  # the cycle of the round that reclaimed, if it had begun already


async def test_fleet_tab_at_80x24_says_why_a_host_is_down_readably():
    """At 80 columns the reason a host is down spans its line's blank columns instead of being cut at the name
    column's NAME_MIN: whole where it fits (the host's own name left off its front), else a word per cause with
    "(Enter: why)", never a word cut; Enter shows the whole text."""
    from servers import exposition_server, socket_server
    from test_fleet_operators import gpudash_page

    def never_answers(conn) -> None:
        while conn.recv(4096):  # reads the request, answers nothing, until the test ends
            pass

    refused = f"127.0.0.1:{free_port()}"
    with exposition_server(gpudash_page("dgx-01", [60, 91])) as (a, _), socket_server(never_answers) as (url, _):
        silent = hostport(url)
        app = fleet_app([hostport(a), refused, silent], timeout_s=2.0, interval=30.0)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("f")
            table = app.query_one("#fleet-table", FleetTable)
            await wait_until(pilot, lambda: table.row_count == 4 and "dgx-01" in screen_text(app), 20)

            def line_of(host: str) -> list[str]:  # its words after the host column (its name may be abbreviated)
                port = host.rsplit(":", 1)[1]
                line = next((line for line in screen_text(app).splitlines() if f":{port} " in line), "")
                return line.split()[1:]

            await wait_until(pilot, lambda: "refused" in line_of(refused) and "timeout" in line_of(silent), 10)
            assert line_of(refused) == ["unreachable", "–", "–", "connection", "refused"]  # whole
            assert line_of(silent) == ["unreachable", "–", "–", "timeout", "(Enter:", "why)"]  # a word, on purpose
            row = next(line for line in screen_text(app).splitlines() if " nvidia:0 " in line)
            assert " H100 80… " in row  # the name column is at NAME_MIN: the reasons did not fit in it
            table.focus()
            table.move_to_key(next(key for key, host in table.host_of.items() if host == silent))
            await pilot.press("enter")
            await wait_until(pilot, lambda: "no answer within 2 s" in squeezed(app), 10)


def test_a_reason_is_whole_or_a_word_per_cause():
    from gpudash.tui.widgets.fleet_table import WHY, reason_in, reason_of, short_reason

    assert reason_of("10.0.0.5:9400", "10.0.0.5:9400: connection refused") == "connection refused"
    assert reason_of("node-a", "node-a:9400: connection refused") == "node-a:9400: connection refused"
    dropped = "no answer within 5 s (dropped from this round); before: connection refused"
    assert short_reason(dropped) == "timeout; before: refused"
    prometheus = 'Get "http://10.0.0.5:9400/metrics": dial tcp 10.0.0.5:9400: connect: connection refused'
    assert short_reason(prometheus) == "refused"
    assert short_reason("server returned HTTP status 503 Service Unavailable") == "HTTP 503"
    assert short_reason("HTTP 404 Not Found") == "HTTP 404"
    assert short_reason("not a Prometheus metrics page (line 3: no value)") == "bad body"
    assert short_reason("an HTML page, not metrics (is the path /metrics?)") == "HTML page"
    assert short_reason("0 GPUs of 8 expected; serves no device series (a wrong port?)") == "GPUs missing; no devices"
    assert short_reason("a; b") == "error"  # each cause once, and none is made up
    assert reason_in("connection refused", 18) == "connection refused"  # whole where it fits
    assert reason_in(prometheus, 40) == "refused" + WHY
    assert reason_in(prometheus, 10) == "refused"


async def test_the_fleet_tab_gives_its_keys_to_the_table():
    """Shown, the tab's table has the focus (FleetView.focus_main), not the filter box hidden until `/`: `down`
    moves the cursor and `s` sorts at once, instead of going into the hidden box."""
    with two_hosts(node_07_temps=[95]) as app:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("f")
            view = app.query_one("#fleet")
            table = app.query_one("#fleet-table", FleetTable)
            await wait_until(pilot, lambda: table.row_count == 3 and app.focused is table, 20)
            await pilot.press("down")
            await wait_until(pilot, lambda: table.cursor_row == 1, 5)
            await pilot.press("s")
            await wait_until(pilot, lambda: view.sort == "status", 5)
            assert view.query_one("#fleet-filter").value == ""


async def test_the_first_round_is_frozen_without_a_collection_on_its_worker(monkeypatch):
    """The round's worker holds the collector off through the round and its preparing, and at the first round
    freezes what it made without collecting it (gc_pause.refreeze): at 1,024 hosts those collections held the GIL
    240-350 ms each while keys waited. No collection runs on the worker before the round lands; it froze."""
    import gc
    import threading

    from gpudash.fleet import gc_pause
    from gpudash.tui.screens.fleet_view import FleetView

    monkeypatch.setattr(gc_pause, "_settled", False)  # as in a new process: this round is the first to settle
    worker: list[int] = []
    on_worker: list[int] = []  # the generations collected on the round's worker before it landed
    landed = threading.Event()
    original_round, original_landed = Scraper.round, FleetView._landed

    def round_here(self):
        worker.append(threading.get_ident())  # the Scraper's caller's thread: the tab's round worker
        return original_round(self)

    def landing(self, *args):
        landed.set()
        return original_landed(self, *args)

    def collected(phase: str, info: dict) -> None:
        if phase == "start" and not landed.is_set() and threading.get_ident() in worker:
            on_worker.append(info["generation"])

    monkeypatch.setattr(Scraper, "round", round_here)
    monkeypatch.setattr(FleetView, "_landed", landing)
    frozen = gc.get_freeze_count()
    gc.callbacks.append(collected)
    try:
        with gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _):
            app = fleet_app([hostport(a)], interval=30.0)
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("f")
                await wait_until(pilot, lambda: "1 host: 1 up" in screen_text(app), timeout=20)
    finally:
        gc.callbacks.remove(collected)
    assert len(worker) == 1 and landed.is_set()
    assert on_worker == []
    assert gc.get_freeze_count() > frozen
