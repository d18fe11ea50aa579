"""The Checks view: the plugin checks and gpudash's health checks together, grouped by device and severity.

The checks run through the same action as `gpudash check` (gpudash.actions.check: each plugin check in a child
process with a time limit, then the health checks: driver counters, kernel log, sysfs, numerics), from a thread
worker; plugin results appear as they arrive, the health results when the run ends. Each device's findings come
first, worst first (CRITICAL, WARN, UNKNOWN), with the action a failed check recommends; its passed checks fold
into one line and the checks that do not apply there into another (a DGX's NVIDIA GPUs skip every ROCm check:
one line per GPU, not one per check). The highlighted line's detail has the fix and environment, or the evidence and action, or
each folded check with its summary (gpudash.render.check_groups). On a replayed machine, checks that need the device are skipped and
table-based ones still run. Plugin load errors are not printed (that would tear the screen); they are counted
here and shown in the Plugins view.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Static

from gpudash.plain_text import one_line
from gpudash.render.check_groups import CheckLine, check_lines, describe_line, severity_tally
from gpudash.render.short_forms import at_word, without_aside
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.actions.check import CheckRun
    from gpudash.actions.session import Session
    from gpudash.health import HealthResult
    from gpudash.plugins_api import CheckResult
    from gpudash.tui.app import GpudashApp

COLUMNS = ("device", "severity", "check", "action", "summary")
SUMMARY_CHARS = 160  # in the table; the detail below has it whole
SEVERITY_STYLE = {"OK": "green", "WARN": "bold yellow", "CRITICAL": "bold red", "UNKNOWN": "bold magenta"}

# runner(session, cancel, on_result) -> CheckRun; the default is the check action
Runner = Callable[["Session", threading.Event, Callable[["CheckResult"], None]], "CheckRun"]


def run_plugin_checks(session: Session, cancel: threading.Event, on_result: Callable[[CheckResult], None]) -> CheckRun:
    from gpudash.actions.check import run

    # Load errors stay in the records (stderr would tear the screen); the app merges torch's view itself.
    return run(session, cancel=cancel, on_result=on_result, on_plugin_error=None, add_torch=False)


class ChecksView(Vertical):
    BINDINGS = [Binding("R", "run_checks", "Run checks", tooltip="run every plugin and health check again")]

    app: GpudashApp

    def __init__(self, app: GpudashApp, runner: Runner | None = None) -> None:
        super().__init__(id="checks")
        self.runner = runner or run_plugin_checks
        self.results: list[CheckResult] = []  # the plugins'
        self.health: list[HealthResult] = []  # gpudash's own health checks, when the run ends
        self.lines: list[CheckLine] = []  # what the table shows (gpudash.render.check_groups)
        self.plugin_errors: list[dict[str, object]] = []  # [{"plugin", "errors"}]
        self.running = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        with Horizontal(id="checks-top"):
            yield Static("", id="checks-status", markup=False)
            yield Button("Run checks (R)", id="checks-run", variant="primary", compact=True)
        yield PlainTable(id="checks-table", cursor_type="row", zebra_stripes=True)
        yield Static(
            "highlight a check to see its fix, its evidence and action, or the checks that do not apply",
            id="checks-detail",
            markup=False,
        )

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*COLUMNS)
        self.action_run_checks()

    def on_unmount(self) -> None:
        self._cancel.set()  # a running check's child process is killed

    # Running -------------------------------------------------------------------------------------

    def action_run_checks(self) -> None:
        if self.running:
            self.app.notify("checks are already running", severity="warning")
            return
        self.running = True
        self.results, self.health, self.lines = [], [], []
        self.query_one(DataTable).clear()
        self._status(f"running checks on {self.app.machine.label}…")
        self._run()

    @work(thread=True, exclusive=True, group="checks", exit_on_error=False, description="run plugin checks")
    def _run(self) -> None:
        try:
            found = self.runner(self.app.session, self._cancel, lambda r: self.app.from_worker(self.add_result, r))
        except Exception as exc:  # shown, never fatal to the dashboard
            self.app.from_worker(self._finished, [], [], f"checks failed: {exc}")
            return
        self.app.from_worker(self._finished, found.plugin_errors, found.health, None)

    def add_result(self, result: CheckResult) -> None:
        self.results.append(result)
        self._show_lines()

    def _show_lines(self) -> None:
        """The table drawn again from every result so far, grouped; the highlighted line stays where it was."""
        table = self.query_one(DataTable)
        row = table.cursor_row
        self.lines = check_lines(self.results, self.health, [d.key for d in self.app.machine.devices])
        table.clear(columns=True)  # the columns too: their widths follow the lines shown now, folded or not
        table.add_columns(*COLUMNS)
        room = self._summary_room()
        for index, line in enumerate(self.lines):
            severity = Text(line.severity or "n/a", style=SEVERITY_STYLE.get(line.severity or "", "dim"))
            action = Text("" if line.action == "none" else line.action, style="bold")
            # Ends at a word where the table is narrow (the detail below has it whole), never cut mid-word.
            summary = Text(at_word(one_line(line.summary, SUMMARY_CHARS), room), style="dim" if line.folded else "")
            table.add_row(line.device, severity, line.name, action, summary, key=str(index))
        if self.lines:
            table.move_cursor(row=min(row, len(self.lines) - 1))
            self._show_detail(table.cursor_row)

    def _summary_room(self) -> int:
        """Columns left for the summary once the others (and each cell's padding, the scrollbar) are drawn."""
        widths = [len(COLUMNS[0]), len(COLUMNS[1]), len(COLUMNS[2]), len(COLUMNS[3])]
        for line in self.lines:
            for i, cell in enumerate((line.device, line.severity or "n/a", line.name, line.action)):
                widths[i] = max(widths[i], len("" if cell == "none" else cell))
        width = self.query_one(DataTable).size.width or self.size.width or 80
        return max(len(COLUMNS[4]), width - sum(w + 2 for w in widths) - 4)

    def on_resize(self) -> None:
        if self.is_mounted and self.lines:
            self._show_lines()

    def _finished(self, errors: list[dict[str, object]], health: list[HealthResult], failure: str | None) -> None:
        self.running = False
        self.plugin_errors = errors
        self.health = health
        self._show_lines()
        if failure:
            self._status(failure)
            return
        broken = f" · {len(errors)} plugin(s) with load errors (see Plugins)" if errors else ""
        found = severity_tally(self.lines) or "no checks registered"
        # The label's aside (a replay's origin) is in the line above every view: left out here, so the tally
        # is never the part cut off.
        self._status(f"{without_aside(self.app.machine.label)} · {found}{broken} · R runs again")

    # Showing -------------------------------------------------------------------------------------

    def _status(self, text: str) -> None:
        self.query_one("#checks-status", Static).update(text)

    def _show_detail(self, index: int) -> None:
        if 0 <= index < len(self.lines):
            self.query_one("#checks-detail", Static).update(describe_line(self.lines[index]))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self._show_detail(int(event.row_key.value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "checks-run":
            self.action_run_checks()
