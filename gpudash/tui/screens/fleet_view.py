"""The Fleet view: every host of the config's [fleet] (Prometheus, or endpoints scraped directly), refreshed.

Rounds run in a thread worker (gpudash.actions.fleet, the same code as `gpudash fleet`), one at a time and
only while this tab is shown; a round never waits longer than its deadline, so a slow or dead host costs
nothing but its own row. Enter on a host drills down into it (its devices, targets, error and utilisation
history: Prometheus's query_range, or what this view has seen); Escape goes back to the whole fleet.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

if TYPE_CHECKING:
    from gpudash.actions.fleet import FleetSpec, Source
    from gpudash.fleet.model import FleetRound, Host
    from gpudash.tui.app import GpudashApp

STATUS_STYLE = {"up": "green", "stale": "bold yellow", "unreachable": "bold red"}
NOT_CONFIGURED = (
    'No fleet configured. Set [fleet] prometheus = "http://prometheus:9090" or hosts = ["node1:9483", ...] '
    "(or hostfile) in the config, or run `gpudash fleet --hosts ...` headless. docs/fleet.md has examples."
)


class FleetView(Vertical):
    BINDINGS = [
        Binding("escape", "back", "All hosts", tooltip="leave the host drill-down"),
        Binding("R", "refresh_now", "Refresh", tooltip="start a round now"),
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
        self.focus_host: str | None = None
        self._history: Any = None
        self._row_hosts: dict[str, str] = {}  # row key -> host name
        self._cells: dict[str, tuple] = {}  # row key -> the cells shown
        self._row_keys: list = []  # the table's own row keys, in order

    def compose(self) -> ComposeResult:
        yield Static("", id="fleet-status", markup=False)
        yield DataTable(id="fleet-table", cursor_type="row", zebra_stripes=True)
        yield Static("Enter on a host: its devices, targets, error and history", id="fleet-detail", markup=False)

    def on_mount(self) -> None:
        from gpudash.actions import fleet as action
        from gpudash.errors import GpudashError
        from gpudash.fleet.interval import refresh_interval

        table = self.query_one(DataTable)
        table.add_columns("host", "status", "device", "name", "util", "memory", "temp", "power", "verified", "amp")
        try:
            spec = self._spec or action.spec_from(self.app.config)
            if not spec.configured:
                self._status(NOT_CONFIGURED)
                return
            self._source, endpoints = action.open_source(spec)
        except GpudashError as exc:
            self._status(f"fleet: {exc}")
            return
        self._interval = refresh_interval(endpoints, spec.interval) if endpoints else (spec.interval or 5.0)
        self._history = action.UtilisationHistory()
        self._status(f"reading the fleet (every {self._interval:g} s)…")
        self.set_interval(0.5, self._tick)
        self._tick()

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

    def _tick(self) -> None:
        if self._source is None or self._busy or time.monotonic() < self._due or not self._shown():
            return
        self._busy = True
        self._due = time.monotonic() + self._interval
        self._round(self.focus_host)

    @work(thread=True, exclusive=True, group="fleet", exit_on_error=False, description="read the fleet")
    def _round(self, focus: str | None) -> None:
        try:
            fleet = self._source.round()  # type: ignore[union-attr]
            self._history.record(fleet)
            host = fleet.host(focus) if focus else None
            if host is not None:
                if hasattr(self._source, "history"):
                    self._source.history(host)  # type: ignore[union-attr]
                else:
                    self._history.fill(host)
        except Exception as exc:  # Prometheus down, say: shown, and the next round tries again
            self.app.from_worker(self._failed, str(exc))
            return
        self.app.from_worker(self._landed, fleet)

    def _landed(self, fleet: FleetRound) -> None:
        self._busy = False
        self.show(fleet)

    def _failed(self, error: str) -> None:
        self._busy = False
        self._status(f"fleet: {error} · next try in {self._interval:g} s")

    def action_refresh_now(self) -> None:
        self._due = 0.0
        self._tick()

    # Showing ---------------------------------------------------------------------------------------

    def show(self, fleet: FleetRound) -> None:
        from gpudash.render.fleet import headline, host_text

        self.fleet = fleet
        host = fleet.host(self.focus_host) if self.focus_host else None
        self._fill_table(fleet, [host] if host is not None else fleet.hosts)
        where = f" · showing {host.name} (Escape: all hosts)" if host is not None else " · Enter drills down"
        self._status(f"{headline(fleet)} · every {self._interval:g} s{where}")
        if host is not None:
            self.query_one("#fleet-detail", Static).update(host_text(fleet, host))
        elif self.focus_host:
            self.query_one("#fleet-detail", Static).update(f"{self.focus_host}: not in the fleet this round")

    def _fill_table(self, fleet: FleetRound, hosts: list[Host]) -> None:
        """Rows in place: when the same rows come back (the usual round) only the cells whose text changed
        are updated; a host appearing, leaving or changing its devices rebuilds the table."""
        from gpudash.render.fleet import device_cells, status_word

        wanted: dict[str, tuple] = {}
        for host in hosts:
            status = Text(status_word(host), style=STATUS_STYLE.get(host.status, ""))
            rows = [(d.id, device_cells(d)) for d in host.devices] or [
                ("-", ["–", host.error or "no devices", *[""] * 6])
            ]
            for i, (device_id, row) in enumerate(rows):
                self._row_hosts[f"{host.name}\t{device_id}"] = host.name
                wanted[f"{host.name}\t{device_id}"] = (host.name if i == 0 else "", status if i == 0 else "", *row)
        table = self.query_one(DataTable)
        if list(wanted) != list(self._cells):
            cursor = table.cursor_row
            table.clear()
            table.add_rows(list(wanted.values()))
            self._row_keys = [row.key for row in table.ordered_rows]
            self._row_hosts = {k: v for k, v in self._row_hosts.items() if k in wanted}
            if table.row_count:
                table.move_cursor(row=min(cursor, table.row_count - 1))
        else:
            columns = [c.key for c in table.ordered_columns]
            for key, row_key in zip(wanted, self._row_keys):
                before = self._cells[key]
                for column, (old, new) in enumerate(zip(before, wanted[key])):
                    if str(old) != str(new) or (isinstance(new, Text) and new.style != getattr(old, "style", None)):
                        table.update_cell(row_key, columns[column], new)
        self._cells = wanted

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        index = self._row_keys.index(event.row_key) if event.row_key in self._row_keys else -1
        name = self._row_hosts.get(list(self._cells)[index]) if index >= 0 else None
        if name is None or self.fleet is None:
            return
        self.focus_host = name
        self._due = 0.0  # fetch its history now
        self.show(self.fleet)
        self._tick()

    def action_back(self) -> None:
        if self.focus_host is None:
            return
        self.focus_host = None
        self.query_one("#fleet-detail", Static).update("Enter on a host: its devices, targets, error and history")
        if self.fleet is not None:
            self.show(self.fleet)

    def _status(self, text: str) -> None:
        self.query_one("#fleet-status", Static).update(text)
