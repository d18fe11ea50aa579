"""The Precision view: the verified precision matrix, one row per precision, one column per group of devices.

Devices of one model that answer alike share a column ("nvidia:0-7 (8x H100 80GB HBM3)"): eight equal
columns would say no more and need sideways scrolling. A device that answers differently keeps its own.

Each cell shows spec · torch · verified (✓ / ⚠ / ✗ / –) and the maximum relative error; the highlighted cell's
details (basis of torch's answer, errors, rate against fp32, the failure reason or note) appear below. On show
it draws what is known at once: remembered probe results marked with their time, else the spec tables and
torch's recorded answers. "Re-run probe" (R) calls the probe action (gpudash.actions.probe) in a thread
worker, with progress; the action remembers the result, as it does for `gpudash probe`. A replayed machine
is never probed.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Static

from gpudash.render.groups import DeviceGroup, frozen, group_devices
from gpudash.render.probe import GLYPH_BOOL, GLYPH_SPEC, GLYPH_VERDICT, LEGEND
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.tui.app import GpudashApp

VERDICT_STYLE = {"verified": "bold green", "slow_reference": "bold yellow", "failed": "bold red", "not_run": "dim"}
VERDICT_WORDS = {
    "verified": "correct",
    "slow_reference": "correct, on a slow reference path",
    "failed": "failed",
    "not_run": "not run",
}
TORCH_WORDS = {True: "claims it", False: "does not claim it", None: "no answer"}
REPLAYED_RUN_OFF = "Re-run is off: a replayed machine is never probed (its devices are elsewhere)"


def cell(entry: dict[str, Any]) -> Text:
    """'✓ ✓ ✓ 8.5e-04' with the verdict coloured."""
    text = Text(f"{GLYPH_SPEC.get(entry['support'], '?')} {GLYPH_BOOL.get(entry['torch'], '?')} ")
    text.append(GLYPH_VERDICT.get(entry["verdict"], "?"), style=VERDICT_STYLE.get(entry["verdict"], ""))
    if entry["max_rel_error"] is not None:
        text.append(f" {entry['max_rel_error']:.1e}", style="dim")
    return text


def describe(key: str, name: str, entry: dict[str, Any], measured_at: str | None) -> str:
    """The highlighted cell in words; every value spelled out (never a bare None or an enum name)."""
    basis = f" ({entry['torch_basis']})" if entry.get("torch_basis") else ""
    verdict = VERDICT_WORDS.get(entry["verdict"], str(entry["verdict"]).replace("_", " "))
    lines = [
        f"{key} {name}: spec {entry['support']} · torch {TORCH_WORDS.get(entry['torch'], 'no answer')}{basis} · "
        f"verified: {verdict}"
    ]
    figures = []
    if entry["max_rel_error"] is not None:
        figures.append(f"max rel error {entry['max_rel_error']:.3g}")
    if entry["max_abs_error"] is not None:
        figures.append(f"max abs error {entry['max_abs_error']:.3g}")
    if entry.get("rate_vs_fp32") is not None:
        figures.append(f"{entry['rate_vs_fp32']:.2f}x fp32's rate")
    if measured_at:
        figures.append(f"measured {measured_at}")
    if figures:
        lines.append(" · ".join(figures))
    for text in (entry.get("failure_reason"), entry.get("note")):
        if text:
            lines.append(text)
    return "\n".join(lines)


def probe_groups(devices: list[dict[str, Any]]) -> list[DeviceGroup]:
    """Devices of one model whose every precision entry is the same."""
    return group_devices(devices, lambda dev: frozen(dev["precisions"]))


def measured_when(group: DeviceGroup) -> str | None:
    times = sorted({m["measured_at"] for m in group.members if m.get("measured_at")})
    if not times:
        return None
    return times[0] if len(times) == 1 else f"{times[0]} to {times[-1]}"


class PrecisionView(Vertical):
    BINDINGS = [Binding("R", "run_probe", "Re-run probe", tooltip="run every precision on every device again")]

    app: GpudashApp

    def __init__(self, app: GpudashApp) -> None:
        super().__init__(id="precision")
        self.measured_at: dict[str, str | None] = {}  # group key -> when its results were measured
        self.entries: dict[tuple[str, str], dict[str, Any]] = {}  # (group key, precision) -> probe JSON entry
        self.columns: list[str] = []  # group keys ("nvidia:0-7"), one column each
        self.groups: list[DeviceGroup] = []
        self.rows: list[str] = []
        self.running = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        replayed = self.app.machine.replayed
        with Horizontal(id="prec-top"):
            yield Static("", id="prec-status", markup=False)
            yield Button(
                "Re-run probe (R)",
                id="prec-run",
                variant="primary",
                compact=True,
                disabled=replayed,
                tooltip=REPLAYED_RUN_OFF if replayed else "run every precision on every device again",
            )
        yield PlainTable(id="prec-table", cursor_type="cell", zebra_stripes=True)
        yield Static("highlight a cell to see its errors and reason", id="prec-detail", markup=False)
        yield Static(LEGEND, id="prec-legend", markup=False)

    def on_mount(self) -> None:
        self.app.machine_changed.subscribe(self, self._machine_changed)
        self.show_known()

    def on_unmount(self) -> None:
        self._cancel.set()  # a probe still running is killed with its child process

    # What is known without running anything ---------------------------------------------------

    def show_known(self) -> None:
        """Remembered results (live) or spec + recorded torch answers (replayed, or nothing remembered)."""
        from gpudash.actions.probe import known

        found = known(self.app.session)
        if found.machine.replayed:
            self.show(found.to_json(), f"{found.machine.label}: spec and torch only, never probed · Re-run is off")
        elif found.saved_at:
            self.show(found.to_json(), f"remembered probe from {found.saved_at} · press R to re-run")
        else:
            self.show(
                found.to_json(), "not probed yet: spec tables, and torch where it reported · press R to run the probe"
            )

    def _machine_changed(self, _machine: object = None) -> None:
        if not self.running:  # torch's view may add devices or the torch answers
            self.show_known()

    # Drawing ----------------------------------------------------------------------------------

    def show(self, doc: dict[str, Any], status: str) -> None:
        """Draw a probe JSON document: one column per group of alike devices, one row per precision."""
        devices = doc["devices"]
        self.groups = probe_groups(devices)
        self.columns = [g.key for g in self.groups]
        self.measured_at = {g.key: measured_when(g) for g in self.groups}
        self.entries = {(g.key, p): entry for g in self.groups for p, entry in g.first["precisions"].items()}
        self.rows = list(dict.fromkeys(p for dev in devices for p in dev["precisions"]))
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_column("precision", key="precision")
        for group in self.groups:
            table.add_column(f"{group.label} spec torch verified", key=group.key)
        for name in self.rows:
            cells = [
                cell(self.entries[(key, name)]) if (key, name) in self.entries else Text("") for key in self.columns
            ]
            table.add_row(Text(name), *cells, key=name)
        self._status(status)
        if self.rows and self.columns:
            table.move_cursor(row=0, column=1)
            self._show_detail(0, 1)

    def _status(self, text: str) -> None:
        self.query_one("#prec-status", Static).update(text)

    def _show_detail(self, row: int, column: int) -> None:
        if not (0 <= row < len(self.rows)) or column < 1 or column > len(self.columns):
            return
        key, name = self.columns[column - 1], self.rows[row]
        entry = self.entries.get((key, name))
        if entry is not None:
            group = self.groups[column - 1]
            self.query_one("#prec-detail", Static).update(describe(group.label, name, entry, self.measured_at[key]))

    def on_data_table_cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        self._show_detail(event.coordinate.row, event.coordinate.column)

    # Re-running -------------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "prec-run":
            self.action_run_probe()

    def action_run_probe(self) -> None:
        if self.app.machine.replayed:
            self.app.notify(REPLAYED_RUN_OFF, severity="information")
            return
        if self.running:
            self.app.notify("the probe is already running", severity="warning")
            return
        if getattr(self.app, "torch_state", None) == "loading":
            self.app.notify(
                "torch is still loading; GPUs get their torch numbers first. Try again in a moment.", severity="warning"
            )
            return
        self.running = True
        self._cancel = threading.Event()
        self.query_one("#prec-run", Button).disabled = True
        self._status("probing: starting a child process…")
        self.probe_worker(self._cancel)

    @work(thread=True, exclusive=True, group="probe", exit_on_error=False, description="probe every precision")
    def probe_worker(self, cancel: threading.Event) -> None:
        from gpudash.actions.probe import probe

        def progress(event: dict[str, Any]) -> None:
            self.app.from_worker(self._progress, event)

        try:
            run = probe(self.app.session, cancel=cancel, on_progress=progress)
        except Exception as exc:  # shown, never fatal to the dashboard
            self.app.from_worker(self._finished, None, f"probe failed: {exc}")
            return
        if cancel.is_set():
            return
        when = run.remembered[0] if run.remembered else "just now"
        self.app.from_worker(self._finished, run.known_json(), f"probed {when} · press R to re-run")

    def _progress(self, event: dict[str, Any]) -> None:
        what = event.get("check") if event["event"] == "check" else event.get("verdict")
        self._status(f"probing {event['device']} {event['precision']}: {what} ({event['done']}/{event['total']} done)…")

    def _finished(self, doc: dict[str, Any] | None, status: str) -> None:
        self.running = False
        self.query_one("#prec-run", Button).disabled = False
        if doc is None:
            self._status(status)
            self.app.notify(status, severity="error")
            return
        self.show(doc, status)
