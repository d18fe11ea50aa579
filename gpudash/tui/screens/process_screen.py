"""One GPU process in full, opened with enter on the process panel (nvitop's process metrics screen, with
more): the whole command and working directory; user, start time, threads, CPU and host memory; its GPU
memory and SM share per device over the history window; its place in the process tree; its environment,
secret-looking values redacted. Escape (or q) returns to the dashboard.

The data is gpudash.actions.process_details (read in a worker thread at each reading) and the app's
process history; the text is gpudash.render.process_details. On a replay the screen shows what the snapshot
recorded and says why the rest is n/a: this machine's process with the same pid is someone else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpudash.actions.process_details import ProcessDetails, ProcessInspector
from gpudash.models import ProcessUsage, Sample
from gpudash.render import process_details as text
from gpudash.tui.widgets.history_chart import HistoryChart

if TYPE_CHECKING:
    from gpudash.tui.app import GpudashApp

MAX_CHARTS = 4  # a process on more GPUs lists the rest as lines: eight charts would not fit a terminal


class ProcessScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="back to the dashboard"),
        Binding("e", "toggle_environment", "Environment", tooltip="show or hide the environment"),
    ]
    DEFAULT_CSS = """
    ProcessScreen #proc-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    ProcessScreen #proc-body { height: 1fr; padding: 0 1; }
    ProcessScreen .proc-heading { margin-top: 1; text-style: bold; color: $primary; }
    ProcessScreen .proc-chart-title { height: 1; }
    ProcessScreen HistoryChart { height: 8; }
    """

    app: GpudashApp

    def __init__(self, pid: int, labels: dict[str, str], recorded: ProcessUsage | None = None) -> None:
        super().__init__()
        self.pid = pid
        self.labels = labels  # device key -> the label the dashboard shows ("3", "nv0")
        self.recorded = recorded  # the listing's row: what a replay shows
        self.details: ProcessDetails | None = None
        self.reads = 0  # for tests: readings shown
        self._inspector: ProcessInspector | None = None
        self._charts: dict[str, tuple[Static, HistoryChart]] = {}

    def compose(self) -> ComposeResult:
        yield Static(f"process {self.pid}", id="proc-title", markup=False)
        with VerticalScroll(id="proc-body"):
            yield Static("", id="proc-fields", markup=False)
            yield Static("GPU memory (% of the device) and SM share", classes="proc-heading")
            yield Vertical(id="proc-charts")
            yield Static("", id="proc-gpu-lines", markup=False)
            yield Static("process tree", classes="proc-heading")
            yield Static("", id="proc-tree", markup=False)
            yield Static("environment (values of names with TOKEN, KEY, SECRET, PASSWORD… redacted)",
                         classes="proc-heading", id="proc-env-heading")  # fmt: skip
            yield Static("", id="proc-env", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._inspector = ProcessInspector(self.app.session, self.pid)
        self.app.samples_applied.subscribe(self, self._on_samples)
        self._read()

    def on_unmount(self) -> None:
        self.app.samples_applied.unsubscribe(self)

    def _on_samples(self, _samples: dict[str, Sample]) -> None:
        self._read()

    @work(thread=True, exclusive=True, group="process-read", exit_on_error=False)
    def _read(self) -> None:
        assert self._inspector is not None
        details = self._inspector.read(self.recorded)
        self.app.from_worker(self._show, details)

    # Drawing ------------------------------------------------------------------------------------

    def _show(self, details: ProcessDetails) -> None:
        if not self.is_attached:
            return
        self.details = details
        self.reads += 1
        state = "" if details.exists else f" · {details.unavailable.get('all', '')}"
        self.query_one("#proc-title", Static).update(f"process {details.pid} · {details.name or ''}{state}")
        rows = text.field_rows(details)
        width = max(len(label) for label, _ in rows)
        lines = Text()
        for i, (label, value) in enumerate(rows):
            lines.append(("\n" if i else "") + label.ljust(width + 2), style="bold")
            lines.append(value)
        self.query_one("#proc-fields", Static).update(lines)
        self.query_one("#proc-tree", Static).update("\n".join(text.tree_lines(details)))
        self.query_one("#proc-env", Static).update("\n".join(text.environment_lines(details)))
        self._show_gpus()

    def _show_gpus(self) -> None:
        history = self.app.process_history
        keys = history.devices_of(self.pid)
        totals = {d.key: d.memory_total_bytes for d in self.app.machine.devices}
        charts = self.query_one("#proc-charts", Vertical)
        lines = []
        for position, key in enumerate(keys):
            memory = history.memory(self.pid, key)
            util = history.utilization(self.pid, key)
            total = totals.get(key) or (self.app.latest.get(key) or Sample()).memory_total_bytes
            label = text.gpu_memory_line(self.labels.get(key, key), memory[-1], total, util[-1])
            if position >= MAX_CHARTS:
                lines.append(label)
                continue
            if key not in self._charts:
                title = Static("", classes="proc-chart-title", markup=False)
                chart = HistoryChart(self.app.refresh_interval, self.app.history_seconds)
                charts.mount(title, chart)
                self._charts[key] = (title, chart)
            title, chart = self._charts[key]
            title.update(label)
            pct = [None if m is None or not total else 100.0 * m / total for m in memory]
            chart.show_series({"memory_pct": pct, "utilization_pct": util})
        if not keys:
            lines.append("not listed on any GPU in the history window")
        self.query_one("#proc-gpu-lines", Static).update("\n".join(lines))
        self.query_one("#proc-gpu-lines", Static).display = bool(lines)

    # Keys ---------------------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss()

    def action_toggle_environment(self) -> None:
        for widget_id in ("#proc-env", "#proc-env-heading"):
            widget = self.query_one(widget_id, Static)
            widget.display = not widget.display
