"""The Benchmarks view: GFLOPS per precision, GFLOPS over matrix size, tables, and earlier runs.

On show it draws the newest kept run at once (the bench history `gpudash bench` keeps too), or on a replayed
machine the spec peaks, never measured. "Run quick" (R) and "Run full" (F) call the bench action
(gpudash.actions.bench) from a thread worker, as `gpudash bench` does: the built-in sweep with a progress bar,
then the plugins' benchmarks (drawn in their own table), and the action keeps the run in the history. Cancel
(escape) stops the child process. Selecting an earlier run in the bottom table adds a "vs earlier" column, so
a driver or library change can be judged before and after.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, ProgressBar, Select, Static
from textual_plotext import PlotextPlot

from gpudash.render.bench import HEADER, PLUGIN_HEADER, bandwidth_line, plugin_rows, precision_rows

if TYPE_CHECKING:
    from gpudash.tui.app import GpudashApp

BenchDoc = dict[str, Any]  # a bench JSON document
SUMMARY = ("fp32", "bf16", "fp16", "int8")  # the columns of the earlier-runs table


def _device_entry(data: BenchDoc, key: str | None) -> dict[str, Any] | None:
    return next((d for d in data.get("devices") or [] if key is not None and d.get("key") == key), None)


def _effective_size(shape: list[int]) -> float:
    m, n, k = shape
    return (m * n * k) ** (1 / 3)


class GflopsBars(PlotextPlot):
    """Best GFLOPS per precision, one bar each."""

    def show(self, dev: dict[str, Any] | None) -> None:
        plt = self.plt
        plt.clear_data()
        best = (dev or {}).get("peak_gflops_by_precision") or {}
        if best:
            plt.bar(list(best), [round(v, 1) for v in best.values()], marker="hd")
            plt.title("best GFLOPS per precision")
        else:
            plt.title(
                "no measurement"
                if not dev
                else "nothing measured: " + ("replayed" if dev.get("replayed") else "not run")
            )
        self.refresh()


class SizeLines(PlotextPlot):
    """GFLOPS over matrix size (the cube root of M·N·K), one line per precision."""

    def show(self, dev: dict[str, Any] | None) -> None:
        plt = self.plt
        plt.clear_data()
        series: dict[str, list[tuple[float, float]]] = {}
        for r in (dev or {}).get("results") or []:
            series.setdefault(r["precision"], []).append((_effective_size(r["shape"]), r["gflops"]))
        for precision, points in series.items():
            points.sort()
            plt.plot([x for x, _ in points], [y for _, y in points], label=precision, marker="hd")
        plt.title("GFLOPS over matrix size (cube root of M·N·K)" if series else "no shapes measured")
        self.refresh()


class BenchView(Vertical):
    BINDINGS = [
        Binding("R", "run('quick')", "Run quick", tooltip="benchmark every precision with the quick sweep"),
        Binding("F", "run('full')", "Run full", tooltip="the long mamf-finder style sweep"),
        Binding("escape", "cancel", "Cancel", tooltip="stop a running benchmark (its child process is killed)"),
    ]

    app: GpudashApp

    def __init__(self, app: GpudashApp) -> None:
        super().__init__(id="bench")
        self.current: BenchDoc | None = None  # the bench JSON document shown
        self.current_label = ""
        self.device_key: str | None = None
        self.runs: list[tuple[str, BenchDoc]] = []  # earlier runs, newest first
        self.baseline: tuple[str, BenchDoc] | None = None
        self.running = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        keys = [d.key for d in self.app.machine.devices]
        with Horizontal(id="bench-top"):
            yield Static("", id="bench-status", markup=False)
            if len(keys) > 1:
                yield Select([(k, k) for k in keys], value=keys[0], allow_blank=False, id="bench-device")
            yield Button("Run quick", id="bench-run", variant="primary")
            yield Button("Run full", id="bench-full")
            yield Button("Cancel", id="bench-cancel", variant="error", disabled=True)
        bar = ProgressBar(id="bench-progress", show_eta=False)
        bar.display = False  # shown while a benchmark runs
        yield bar
        with Horizontal(id="bench-charts"):
            yield GflopsBars(id="bench-bars")
            yield SizeLines(id="bench-lines")
        yield DataTable(id="bench-table", cursor_type="row", zebra_stripes=True)
        plugins: DataTable[str] = DataTable(id="bench-plugins", cursor_type="row", zebra_stripes=True)
        plugins.display = False  # shown when the run has plugin benchmarks that measured
        yield plugins
        with Horizontal(id="bench-bottom"):
            yield DataTable(id="bench-history", cursor_type="row")
            yield Static("", id="bench-notes", markup=False)

    def on_mount(self) -> None:
        keys = [d.key for d in self.app.machine.devices]
        self.device_key = keys[0] if keys else None
        self.show_known()
        self.query_one("#bench-table", DataTable).focus()  # so R, F and escape reach this view at once

    def on_unmount(self) -> None:
        self._cancel.set()  # a benchmark still running is killed with its child process

    # What is known without running anything ----------------------------------------------------

    def show_known(self) -> None:
        from gpudash.actions.bench import known

        found = known(self.app.session)
        if found.spec is not None:  # a replayed machine: nothing ran, the spec peaks are labelled
            self.show(found.spec, "replayed: not run, spec peaks shown")
            self._status("replayed: never measured; peaks from the tables, with their provenance")
            return
        self.runs = found.runs
        if self.runs:
            saved_at, data = self.runs[0]
            self.show(data, f"run of {saved_at}")
            self._status(f"newest run {saved_at} · R: quick sweep · F: full")
        else:
            self.show(None, "")
            self._status("no benchmark yet · R: quick sweep (about half a minute on a small CPU) · F: full")

    # Drawing -----------------------------------------------------------------------------------

    def show(self, data: BenchDoc | None, label: str) -> None:
        self.current, self.current_label = data, label
        dev = _device_entry(data, self.device_key) if data and self.device_key else None
        self.query_one(GflopsBars).show(dev)
        self.query_one(SizeLines).show(dev)
        self._fill_table(dev)
        not_measured = self._fill_plugins(dev)
        self._fill_history()
        notes = []
        if dev is not None:
            notes.append(bandwidth_line(dev))
            notes += precision_rows(dev)[1] + [f"note: {n}" for n in dev.get("notes") or []]
            notes += [f"plugin benchmark {line}" for line in not_measured]
        self.query_one("#bench-notes", Static).update("\n".join(notes) or "select an earlier run (enter) to compare")

    def _fill_plugins(self, dev: dict[str, Any] | None) -> list[str]:
        """The plugin benchmarks that measured, in their table; returns a line for each that did not."""
        rows, not_measured = plugin_rows(dev) if dev is not None else ([], [])
        table = self.query_one("#bench-plugins", DataTable)
        table.clear(columns=True)
        table.display = bool(rows)
        for name in PLUGIN_HEADER:
            table.add_column(name, key=name)
        for i, row in enumerate(rows):
            table.add_row(*row, key=str(i))
        return not_measured

    def _fill_table(self, dev: dict[str, Any] | None) -> None:
        table = self.query_one("#bench-table", DataTable)
        table.clear(columns=True)
        baseline = self.baseline
        compare = _device_entry(baseline[1], self.device_key) if baseline else None
        extra = [f"vs {baseline[0]}"] if baseline and compare is not None else []
        for name in HEADER + extra:
            table.add_column(name, key=name)
        if dev is None:
            return
        rows, _ = precision_rows(dev)
        before = (compare or {}).get("peak_gflops_by_precision") or {}
        now = dev.get("peak_gflops_by_precision") or {}
        for row in rows:
            p = row[0]
            if compare is not None:
                ratio = now[p] / before[p] if now.get(p) and before.get(p) else None
                row = row + ["–" if ratio is None else f"{ratio:.2f}x"]
            table.add_row(*row, key=p)

    def _fill_history(self) -> None:
        table = self.query_one("#bench-history", DataTable)
        table.clear(columns=True)
        for name in ("earlier runs (enter: compare)", "mode", *SUMMARY):
            table.add_column(name, key=name)
        for i, (saved_at, data) in enumerate(self.runs):
            dev = _device_entry(data, self.device_key) or {}
            best = dev.get("peak_gflops_by_precision") or {}
            table.add_row(
                saved_at,
                data.get("mode") or "?",
                *("–" if best.get(p) is None else f"{best[p]:,.1f}" for p in SUMMARY),
                key=str(i),
            )

    def _status(self, text: str) -> None:
        self.query_one("#bench-status", Static).update(text)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "bench-device" and event.value != Select.BLANK:
            self.device_key = str(event.value)
            self.show(self.current, self.current_label)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "bench-history" or event.row_key.value is None:
            return
        self.baseline = self.runs[int(event.row_key.value)]
        self.show(self.current, self.current_label)

    # Running -----------------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions = {
            "bench-run": lambda: self.action_run("quick"),
            "bench-full": lambda: self.action_run("full"),
            "bench-cancel": self.action_cancel,
        }
        if event.button.id in actions:
            actions[event.button.id]()

    def action_run(self, mode: str) -> None:
        if self.app.machine.replayed:
            self.app.notify("a replayed machine is never measured: spec peaks only", severity="information")
            return
        if self.running:
            self.app.notify("a benchmark is already running", severity="warning")
            return
        self.running = True
        self._cancel = threading.Event()
        self._buttons(running=True)
        bar = self.query_one(ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self._status(f"benchmarking ({mode} sweep): starting a child process…")
        self.bench_worker(mode, self._cancel)

    def action_cancel(self) -> None:
        if self.running:
            self._cancel.set()
            self._status("cancelling…")

    def _buttons(self, running: bool) -> None:
        self.query_one("#bench-run", Button).disabled = running
        self.query_one("#bench-full", Button).disabled = running
        self.query_one("#bench-cancel", Button).disabled = not running

    @work(thread=True, exclusive=True, group="bench", exit_on_error=False, description="benchmark every precision")
    def bench_worker(self, mode: str, cancel: threading.Event) -> None:
        from gpudash.actions import bench

        session = self.app.session
        try:
            found = bench.run(
                session,
                bench.plan(session, mode=mode),
                cancel=cancel,
                on_progress=lambda event: self.app.from_worker(self._progress, event),
                on_status=lambda message: self.app.from_worker(self._status, f"{message}…"),
            )
        except Exception as exc:  # shown, never fatal to the dashboard
            self.app.from_worker(self._finished, None, f"benchmark failed: {exc}")
            return
        if found.data is None:
            self.app.from_worker(self._finished, None, "cancelled: nothing saved")
            return
        self.app.from_worker(
            self._finished, found.data, f"measured just now ({mode} sweep) · saved with the earlier runs"
        )

    def _progress(self, event: dict[str, Any]) -> None:
        self.query_one(ProgressBar).update(total=event["total"], progress=event["done"])
        shape = event.get("shape")
        what = " ".join(str(x) for x in (event.get("device"), event.get("precision") or event.get("kind")) if x)
        self._status(
            f"benchmarking {what}{' ' + 'x'.join(map(str, shape)) if shape else ''} "
            f"({event['done']}/{event['total']} cases) · escape cancels"
        )

    def _finished(self, data: BenchDoc | None, status: str) -> None:
        from gpudash.actions.bench import known

        self.running = False
        self.query_one(ProgressBar).display = False
        self._buttons(running=False)
        self._status(status)
        if data is None:
            self.app.notify(status, severity="information" if status.startswith("cancelled") else "error")
            return
        self.runs = known(self.app.session).runs
        self.show(data, "just measured")
