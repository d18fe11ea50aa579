"""The Checks view: every plugin check on every device, with the highlighted result's fix and env vars.

The checks run through the same action as `gpudash check` (gpudash.actions.check: each in a child process
with a time limit), from a thread worker; results appear as they arrive. On a replayed machine, checks that
need the device are skipped and table-based ones still run. Plugin load errors are not printed (that would
tear the screen); they are counted here and shown in the Plugins view.
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

from gpudash.render.check import describe, tally
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.actions.check import CheckRun
    from gpudash.actions.session import Session
    from gpudash.plugins_api import CheckResult
    from gpudash.tui.app import GpudashApp

STATUS_STYLE = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "error": "bold magenta", "skip": "dim"}

# runner(session, cancel, on_result) -> CheckRun; the default is the check action
Runner = Callable[["Session", threading.Event, Callable[["CheckResult"], None]], "CheckRun"]


def run_plugin_checks(session: Session, cancel: threading.Event, on_result: Callable[[CheckResult], None]) -> CheckRun:
    from gpudash.actions.check import run

    # Load errors stay in the records (stderr would tear the screen); the app merges torch's view itself.
    return run(session, cancel=cancel, on_result=on_result, on_plugin_error=None, add_torch=False)


class ChecksView(Vertical):
    BINDINGS = [Binding("R", "run_checks", "Run checks", tooltip="run every plugin check again")]

    app: GpudashApp

    def __init__(self, app: GpudashApp, runner: Runner | None = None) -> None:
        super().__init__(id="checks")
        self.runner = runner or run_plugin_checks
        self.results: list[CheckResult] = []
        self.plugin_errors: list[dict[str, object]] = []  # [{"plugin", "errors"}]
        self.running = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        with Horizontal(id="checks-top"):
            yield Static("", id="checks-status", markup=False)
            yield Button("Run checks (R)", id="checks-run", variant="primary", compact=True)
        yield PlainTable(id="checks-table", cursor_type="row", zebra_stripes=True)
        yield Static("highlight a check to see its fix and environment variables", id="checks-detail", markup=False)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("device", "check", "status", "summary")
        self.action_run_checks()

    def on_unmount(self) -> None:
        self._cancel.set()  # a running check's child process is killed

    # Running -------------------------------------------------------------------------------------

    def action_run_checks(self) -> None:
        if self.running:
            self.app.notify("checks are already running", severity="warning")
            return
        self.running = True
        self.results = []
        self.query_one(DataTable).clear()
        self._status(f"running checks on {self.app.machine.label}…")
        self._run()

    @work(thread=True, exclusive=True, group="checks", exit_on_error=False, description="run plugin checks")
    def _run(self) -> None:
        try:
            found = self.runner(self.app.session, self._cancel, lambda r: self.app.from_worker(self.add_result, r))
        except Exception as exc:  # shown, never fatal to the dashboard
            self.app.from_worker(self._finished, [], f"checks failed: {exc}")
            return
        self.app.from_worker(self._finished, found.plugin_errors, None)

    def add_result(self, result: CheckResult) -> None:
        self.results.append(result)
        table = self.query_one(DataTable)
        status = Text(result.status, style=STATUS_STYLE.get(result.status, ""))
        table.add_row(
            result.device, f"{result.plugin}/{result.check}", status, result.summary, key=str(len(self.results) - 1)
        )
        if len(self.results) == 1:
            self._show_detail(0)

    def _finished(self, errors: list[dict[str, object]], failure: str | None) -> None:
        self.running = False
        self.plugin_errors = errors
        if failure:
            self._status(failure)
            return
        broken = f" · {len(errors)} plugin(s) with load errors (see Plugins)" if errors else ""
        self._status(
            f"{self.app.machine.label} · {tally(self.results) or 'no checks registered'}{broken} · R runs again"
        )

    # Showing -------------------------------------------------------------------------------------

    def _status(self, text: str) -> None:
        self.query_one("#checks-status", Static).update(text)

    def _show_detail(self, index: int) -> None:
        if 0 <= index < len(self.results):
            self.query_one("#checks-detail", Static).update(describe(self.results[index]))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self._show_detail(int(event.row_key.value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "checks-run":
            self.action_run_checks()
