"""The Fleet view: every host of the config's [fleet] (Prometheus, or endpoints scraped directly), refreshed.

Rounds run in a thread worker (gpudash.actions.fleet, the same code as `gpudash fleet`), one at a time and
only while this tab is shown; a round never waits longer than its deadline, so a slow or dead host costs
nothing but its own row. Enter on a host drills down into it (its devices, targets, error and utilisation
history: Prometheus's query_range, or what this view has seen); Escape goes back to the whole fleet.
Under the status line, the totals of the hosts shown (gpudash.fleet.totals); `/` takes a filter in `gpudash fleet
--filter`'s grammar (gpudash.fleet.filter), applied to every round until cleared with an empty one; `s` cycles the
sort through `gpudash fleet --sort`'s keys (host, then worst first: status, health, util, temp, power, mem, gpus).
As the command does, a drift column marks the hosts whose driver, CUDA/ROCm, torch, gpudash or VBIOS differ from
the fleet's (gpudash.fleet.drift), and the box under the table says the drift and the GPU memory per user and job
where exporters label them (gpudash.render.fleet_summary), all over the hosts shown.
What a round shows (filtered, sorted, the table's lines, the totals and the box's text: `prepare`) is worked out
in the round's worker thread; the UI thread only puts it on screen (docs/performance.md, "Fleet at 1,024 hosts
through Prometheus"). A filter, sort or drill-down chosen while a round runs is applied to the round on the UI
thread when it lands.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState

from gpudash.fleet.gc_pause import collector_paused, reclaim, refreeze
from gpudash.tui.widgets.fleet_table import FleetTable, TableRows, table_rows

if TYPE_CHECKING:
    from gpudash.actions.fleet import FleetSpec, Source
    from gpudash.fleet.model import FleetRound, Host
    from gpudash.tui.app import GpudashApp

FIRST_ROUND_AFTER_S = 0.3
# What rounds froze and later left as cyclic garbage (gpudash.fleet.gc_pause) is freed by a full collection in a
# round's worker this often, once no key has come for RECLAIM_IDLE_S: it holds the GIL 112-120 ms at 128 hosts,
# 290-690 ms at 1,024 (docs/performance.md, "Fleet soak"). Keys can put it off, but not without bound
# (reclaim_due): from RECLAIM_SOONER_AFTER periods since the last, a quiet RECLAIM_SOONER_IDLE_S will do, and
# from RECLAIM_ANYWAY_AFTER periods it runs at the next round whatever the keys (docs/fleet.md).
RECLAIM_EVERY_S = 600.0
RECLAIM_IDLE_S = 5.0
RECLAIM_SOONER_AFTER = 2.0  # x RECLAIM_EVERY_S since the last reclaim: overdue, a shorter quiet gap will do
RECLAIM_SOONER_IDLE_S = 1.0
RECLAIM_ANYWAY_AFTER = 3.0  # x RECLAIM_EVERY_S: run at the next round, a key pressed then waits for it
HINT = "Enter on a host: its devices, targets, error and history"
NOT_CONFIGURED = (
    'No fleet configured. Set [fleet] prometheus = "http://prometheus:9090" or hosts = ["node1:9483", ...] '
    "(or hostfile) in the config, or run `gpudash fleet --hosts ...` headless. docs/fleet.md has examples."
)


def reclaim_due(since_reclaim: float, since_key: float) -> bool:
    """Whether a round's worker runs gc_pause.reclaim now, `since_reclaim` seconds after the last one and
    `since_key` after the last key: once a period is over and no key came for RECLAIM_IDLE_S; from
    RECLAIM_SOONER_AFTER periods, after RECLAIM_SOONER_IDLE_S without one; from RECLAIM_ANYWAY_AFTER, regardless.
    What rounds froze and left as garbage meanwhile (about 0.5 MiB a minute at 128 hosts) is so bounded by
    RECLAIM_ANYWAY_AFTER periods' worth, however the keys come."""
    every = RECLAIM_EVERY_S
    if since_reclaim < every:
        return False
    if since_reclaim >= RECLAIM_ANYWAY_AFTER * every:
        return True
    idle = RECLAIM_SOONER_IDLE_S if since_reclaim >= RECLAIM_SOONER_AFTER * every else RECLAIM_IDLE_S
    return since_key >= idle


@dataclass(frozen=True)
class Choice:
    """What the user chose to see: the filter (its text and terms), the sort and the host drilled into."""

    filter_text: str = ""
    terms: tuple = ()  # gpudash.fleet.filter.Term
    sort: str = "host"  # one of gpudash.fleet.filter.SORTS, as `gpudash fleet --sort` takes it
    focus_host: str | None = None


@dataclass(frozen=True)
class Prepared:
    """A round as the view shows it for a Choice (worked out on any thread)."""

    choice: Choice
    totals: str
    headline: str
    host: Host | None  # the host drilled into, when it is in the round
    table: TableRows
    odd: dict[str, list[str]]
    detail: str  # the box under the table: the host's text, or the summary with the hint


def prepare(fleet: FleetRound, choice: Choice, before: dict | None = None) -> Prepared:
    """`before`: the lines of the last round prepared (fleet_table.table_rows)."""
    from gpudash.fleet.drift import drift, odd_facts
    from gpudash.fleet.filter import apply_filter, sort_hosts
    from gpudash.render.fleet import headline, host_text, totals_line
    from gpudash.render.fleet_summary import summary_lines

    fleet = sort_hosts(apply_filter(fleet, list(choice.terms)), choice.sort)
    totals = totals_line(fleet) + (f" · filter: {choice.filter_text} (/ to change)" if choice.terms else "")
    if choice.sort != "host":
        totals += f" · sort: {choice.sort}, worst first (s: next)"
    drifts = drift(fleet)
    odd = odd_facts(drifts)
    host = fleet.host(choice.focus_host) if choice.focus_host else None
    if host is not None:
        detail = host_text(fleet, host)
    elif choice.focus_host:
        detail = f"{choice.focus_host}: not in the fleet this round"
    else:
        detail = "\n".join([*summary_lines(fleet, drifts), HINT])
    rows = table_rows([host] if host is not None else fleet.hosts, odd, before)
    return Prepared(choice, totals, headline(fleet), host, rows, odd, detail)


class FleetView(Vertical):
    BINDINGS = [
        Binding("escape", "back", "All hosts", tooltip="leave the host drill-down"),
        Binding("R", "refresh_now", "Refresh", tooltip="start a round now"),
        Binding("slash", "filter", "Filter", tooltip="show only what a filter lets through, e.g. temp>85 host~=dgx"),
        Binding("s", "cycle_sort", "Sort", tooltip="the next sort: host, then worst first by status, health, util, …"),
    ]
    app: GpudashApp

    def __init__(self, app: GpudashApp, spec: FleetSpec | None = None) -> None:
        super().__init__(id="fleet")
        self._spec = spec
        self._source: Source | None = None
        self._interval = 3.0
        self._busy = False
        self._due = 0.0
        self.fleet: FleetRound | None = None
        self._history: Any = None
        self._status_length = -1
        self._adaptive = False
        self.choice = Choice()
        self._totals_length = -1
        self._summary = HINT  # what the box under the table says while no host is drilled into
        self._said = ""  # the status line without the host names' legend
        self._lines: dict = {}  # the last round's table lines by row key, in the round's worker (prepare)
        self._reclaimed = time.monotonic()  # the last full collection of what rounds froze (gc_pause.reclaim)
        self._last_key = float("-inf")  # when a key last reached this view (on_key, on_input_changed)

    def compose(self) -> ComposeResult:
        yield Static("", id="fleet-status", markup=False)
        yield Static("", id="fleet-totals", markup=False)
        filter_box = Input(
            placeholder="filter, e.g. temp>85 host~=dgx (Enter applies; empty clears)", id="fleet-filter"
        )
        filter_box.display = False
        yield filter_box
        yield FleetTable(id="fleet-table")
        yield Static(HINT, id="fleet-detail", markup=False)

    def on_mount(self) -> None:
        from gpudash.actions import fleet as action
        from gpudash.errors import GpudashError
        from gpudash.fleet.interval import refresh_interval

        try:
            spec = self._spec or action.spec_from(self.app.config)
            if not spec.configured:
                self._status(NOT_CONFIGURED)
                return
            self._source, endpoints = action.open_source(spec)
            if hasattr(self._source, "refreezes"):
                self._source.refreezes = False  # each round's worker freezes what it keeps (_round)
        except GpudashError as exc:
            self._status(f"fleet: {exc}")
            return
        self._interval = refresh_interval(endpoints, spec.interval) if endpoints else (spec.interval or 5.0)
        self._adaptive = not spec.interval  # Prometheus: its targets' scrape interval, once a round has said it
        self._history = action.UtilisationHistory()
        self._status(f"reading the fleet (every {self._interval:g} s)…")
        self.set_interval(0.5, self._tick)
        # The first round a moment after the tab's first paint: a large fleet's first round holds the GIL for
        # seconds (1,024 hosts over Prometheus: about 5 s, decoding JSON), and the tab should be on screen first.
        self.set_timer(FIRST_ROUND_AFTER_S, self._tick)

    def focus_main(self) -> None:
        """The keys go to the table once the tab is shown (GpudashApp.focus_view), not to the first focusable
        widget, which was the filter box, hidden until `/`: `s` was typed into it, up and down went nowhere,
        and the first round's table took the focus only when a test or a click gave it (its restyle and the
        footer's rebuild then fell on the first key: docs/performance.md, "Fleet at 1,024 hosts")."""
        self.query_one(FleetTable).focus()

    def on_unmount(self) -> None:
        if self._source is not None:
            self._source.close()

    # Rounds ----------------------------------------------------------------------------------------

    def _shown(self) -> bool:
        node: Any = self
        while node is not None:
            if not getattr(node, "display", True):
                return False
            node = node.parent
        return True

    @property
    def sort(self) -> str:
        return self.choice.sort

    @property
    def focus_host(self) -> str | None:
        return self.choice.focus_host

    def _tick(self) -> None:
        if self._source is None or self._busy or time.monotonic() < self._due or not self._shown():
            return
        self._busy = True
        self._due = time.monotonic() + self._interval
        self._round(self.choice)

    @work(thread=True, exclusive=True, group="fleet", exit_on_error=False, description="read the fleet")
    def _round(self, choice: Choice) -> None:
        # The collector is held off through the round, its history and its preparing, and the round's objects
        # are frozen before it runs again (gpudash.fleet.gc_pause): otherwise, once the round ends, the next
        # allocation anywhere set off a collection of them all (the collector had been off while they were made),
        # and refreeze's walked them again: at the first round of 1,024 hosts, 240-300 ms and 240-350 ms of
        # this thread holding the GIL while keys waited.
        failed: str | None = None
        prepared: Prepared | None = None
        with collector_paused():
            try:
                fleet = self._round_and_history(choice.focus_host)
            except Exception as exc:  # Prometheus down, say: shown, and the next round tries again
                failed = str(exc)
            else:
                try:
                    prepared = prepare(fleet, choice, self._lines)  # here, not on the UI thread that takes the keys
                    self._lines = dict(prepared.table.rows)  # only this worker reads it: rounds run one at a time
                except Exception:  # a bug in showing the round: said where it is shown, on the UI thread (_landed)
                    prepared = None
                # No full collection walks what this round keeps, on any thread: one fell on the UI thread every
                # round or two at 1,024 hosts, 290-690 ms (gpudash.fleet.gc_pause). Except, every RECLAIM_EVERY_S
                # at a quiet moment (reclaim_due), one that frees the cyclic garbage earlier rounds froze.
                now = time.monotonic()
                if reclaim_due(now - self._reclaimed, now - self._last_key):
                    reclaim(first=True)
                    self._reclaimed = time.monotonic()
                else:
                    refreeze(first=True)
        if failed is not None:
            self.app.from_worker(self._failed, failed)
        else:
            self.app.from_worker(self._landed, fleet, prepared)

    def _round_and_history(self, focus: str | None) -> FleetRound:
        fleet = self._source.round()  # type: ignore[union-attr]
        self._history.record(fleet)
        host = fleet.host(focus) if focus else None
        if host is not None:
            if hasattr(self._source, "history"):
                self._source.history(host)  # type: ignore[union-attr]
            else:
                self._history.fill(host)
        return fleet

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that ended with an error outside the round's own handling (a round whose showing failed is
        said by _landed) must not stop the rounds: _failed clears the busy flag the next tick waits for."""
        if event.worker.group == "fleet" and event.state == WorkerState.ERROR:
            self._failed(f"{type(event.worker.error).__name__}: {event.worker.error}")

    def on_key(self, event: events.Key) -> None:
        self._last_key = time.monotonic()  # not handled here: the key goes on up as before

    def on_input_changed(self, event: Input.Changed) -> None:
        self._last_key = time.monotonic()  # a key typed in the filter box (which keeps the printable ones)

    def _landed(self, fleet: FleetRound, prepared: Prepared | None = None) -> None:
        self._busy = False
        paced = getattr(self._source, "interval_s", None)
        if self._adaptive and paced and paced != self._interval:
            self._due += paced - self._interval
            self._interval = paced
        try:
            if prepared is not None and prepared.choice == self.choice:
                self.fleet = fleet
                self._put(prepared)
            else:  # the user chose another view of it while the round ran (or preparing it failed): again, here
                self.show(fleet)
        except Exception as exc:  # a bug in showing the round, not a host (those are in the round): said here,
            # where it happened; the worker's own state may be lost to the next round's start.
            self._failed(f"{type(exc).__name__}: {exc}")

    def _failed(self, error: str) -> None:
        self._busy = False
        self._due = time.monotonic() + self._interval  # as the line says, and the error stays up until then
        self._status(f"fleet: {error} · next try in {self._interval:g} s")

    def action_refresh_now(self) -> None:
        self._due = 0.0
        self._tick()

    # Showing ---------------------------------------------------------------------------------------

    def show(self, fleet: FleetRound) -> None:
        self.fleet = fleet
        self._put(prepare(fleet, self.choice))

    def _put(self, prepared: Prepared) -> None:
        """A prepared round on screen: the table compares its lines with those shown and draws what changed."""
        totals = prepared.totals
        box = self.query_one("#fleet-totals", Static)
        box.update(totals, layout=len(totals) != self._totals_length)
        self._totals_length = len(totals)
        host = prepared.host
        table = self.query_one(FleetTable)
        table.odd = prepared.odd
        table.show_rows(prepared.table)
        where = f" · showing {host.name} (Escape: all hosts)" if host is not None else " · Enter drills down"
        self._said = f"{prepared.headline} · every {self._interval:g} s{where}"
        self._say()
        detail = self.query_one("#fleet-detail", Static)
        if host is not None or self.focus_host:
            self._summary = ""  # the box says something else now: the summary is shown again in full
            detail.update(prepared.detail)
        else:
            if prepared.detail != self._summary:  # mostly the same from round to round: no new layout then
                detail.update(prepared.detail)
            self._summary = prepared.detail

    def _say(self) -> None:
        legend = self.query_one(FleetTable).legend
        self._status(f"{self._said} · {legend}" if legend else self._said)

    def on_fleet_table_legend_changed(self, event: FleetTable.LegendChanged) -> None:
        event.stop()
        if self._said:
            self._say()

    def on_live_table_row_selected(self, event: FleetTable.RowSelected) -> None:
        name = self.query_one(FleetTable).host_of.get(event.row_key)
        if name is None or self.fleet is None:
            return
        self.choice = dataclasses.replace(self.choice, focus_host=name)
        self._due = 0.0  # fetch its history now
        self.show(self.fleet)
        self._tick()

    def action_back(self) -> None:
        if self.focus_host is None:
            return
        self.choice = dataclasses.replace(self.choice, focus_host=None)
        self.query_one("#fleet-detail", Static).update(HINT)
        self._summary = HINT
        if self.fleet is not None:
            self.show(self.fleet)

    def action_cycle_sort(self) -> None:
        from gpudash.fleet.filter import SORTS

        self.choice = dataclasses.replace(self.choice, sort=SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)])
        if self.fleet is not None:
            self.show(self.fleet)

    def action_filter(self) -> None:
        box = self.query_one("#fleet-filter", Input)
        box.value = self.choice.filter_text
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from gpudash.errors import UsageError
        from gpudash.fleet.filter import parse_filter

        if event.input.id != "fleet-filter":
            return
        event.stop()
        text = event.value.strip()
        try:
            terms = tuple(parse_filter(text))
        except UsageError as exc:  # one line, as the command says it; the filter shown stays
            self.query_one("#fleet-totals", Static).update(str(exc))
            self._totals_length = -1
            return
        self.choice = dataclasses.replace(self.choice, filter_text=text, terms=terms)
        event.input.display = False
        self.query_one(FleetTable).focus()
        if self.fleet is not None:
            self.show(self.fleet)

    def _status(self, text: str) -> None:
        # A new layout of the whole screen is costly; the line is redrawn in place while its length (so its
        # wrapping) stays the same, which it does from round to round.
        status = self.query_one("#fleet-status", Static)
        status.update(text, layout=len(text) != self._status_length)
        self._status_length = len(text)
