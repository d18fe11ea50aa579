"""The Benchmarks view: GFLOPS per precision, GFLOPS over matrix size, tables, and earlier runs.

Devices of one model are one entry ("nvidia:0-7 (8x H100 80GB HBM3)"): its table is the first member's, and
when more members measured, a column gives the spread of their best GFLOPS. The size chart draws one group
of precisions at a time (the group of the highlighted row: 32/64-bit, 16-bit, 8-bit and below), with its
legend beside the chart rather than over the data, and round ticks on both axes.

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

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, ProgressBar, Select, Static
from textual_plotext import PlotextPlot

from gpudash.render import axes
from gpudash.render.bench import HEADER, PLUGIN_HEADER, bandwidth_line, mamf_lines, plugin_rows, precision_rows
from gpudash.render.column_fit import dropped_marker, fit_columns
from gpudash.render.groups import DeviceGroup, group_devices
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.tui.app import GpudashApp

BenchDoc = dict[str, Any]  # a bench JSON document
SUMMARY = ("fp32", "bf16", "fp16", "int8")  # the columns of the earlier-runs table
# The size chart shows one group at a time: a handful of lines a person can tell apart.
PRECISION_GROUPS = (
    ("32/64-bit", ("fp64", "fp32", "tf32")),
    ("16-bit", ("fp16", "bf16")),
    ("8-bit and below", ("fp8_e4m3", "fp8_e5m2", "int8", "fp4")),
)
SERIES_COLOURS = ("accent", "primary", "warning", "success")  # theme variables, one per line of a group
# At narrow widths the precision table leaves out whole columns in this order (docs/cli.md), never a cut figure.
NARROW_DROP = ("latency ms (p10-p90)", "median", "at shape", "efficiency", "vs fp32", "% of MAMF")
REPLAYED_RUN_OFF = "Run is off: a replayed machine is never measured (its devices are elsewhere); spec peaks only"


def device_groups(app: GpudashApp) -> list[DeviceGroup]:
    """One entry per model: every device of one vendor and name (measured figures may differ)."""
    docs = [{"key": d.key, "vendor": d.vendor, "index": d.index, "name": d.name} for d in app.machine.devices]
    return group_devices(docs, lambda _dev: None)


def precision_group(precision: str | None) -> tuple[str, tuple[str, ...]]:
    for title, members in PRECISION_GROUPS:
        if precision in members:
            return title, members
    return (precision or "?"), (precision or "?",)


def _device_entry(data: BenchDoc, key: str | None) -> dict[str, Any] | None:
    return next((d for d in data.get("devices") or [] if key is not None and d.get("key") == key), None)


def _effective_size(shape: list[int]) -> float:
    m, n, k = shape
    return (m * n * k) ** (1 / 3)


def _theme_rgb(plot: PlotextPlot, name: str) -> tuple[int, int, int]:
    try:
        return Color.parse(plot.app.theme_variables.get(name, "white")).rgb
    except Exception:  # an odd theme value: white beats a crash
        return (255, 255, 255)


class GflopsBars(PlotextPlot):
    """Best GFLOPS per precision, one bar each; round y ticks."""

    def show(self, dev: dict[str, Any] | None) -> None:
        plt = self.plt
        plt.clear_data()
        best = (dev or {}).get("peak_gflops_by_precision") or {}
        if best:
            plt.bar(list(best), [round(v, 1) for v in best.values()], marker="hd", color=_theme_rgb(self, "primary"))
            ticks = axes.nice_ticks(max(best.values()))
            plt.yticks(ticks, [axes.short_number(t) for t in ticks])
            plt.ylim(0, ticks[-1])
            plt.title("best GFLOPS per precision")
        else:
            plt.yticks([], [])
            plt.title(
                "no measurement"
                if not dev
                else "nothing measured: " + ("replayed" if dev.get("replayed") else "not run")
            )
        self.refresh()


class SizeLines(PlotextPlot):
    """GFLOPS over matrix size (the cube root of M·N·K, powers of two across), one group of precisions."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.legend: list[tuple[str, tuple[int, int, int]]] = []  # drawn beside the chart, not over the data
        self.group_title = ""

    def show(self, dev: dict[str, Any] | None, precision: str | None = None) -> None:
        import math

        plt = self.plt
        plt.clear_data()
        series: dict[str, list[tuple[float, float]]] = {}
        for r in (dev or {}).get("results") or []:
            series.setdefault(r["precision"], []).append((_effective_size(r["shape"]), r["gflops"]))
        first = next(iter(series), None)
        self.group_title, members = precision_group(precision if precision in series else first)
        shown = {p: sorted(points) for p, points in series.items() if p in members}
        self.legend = []
        for i, (name, points) in enumerate(shown.items()):
            rgb = _theme_rgb(self, SERIES_COLOURS[i % len(SERIES_COLOURS)])
            plt.plot([math.log2(x) for x, _ in points], [y for _, y in points], marker="hd", color=rgb)
            self.legend.append((name, rgb))
        if shown:
            sizes = [x for points in shown.values() for x, _ in points]
            ticks = axes.power_of_two_ticks(min(sizes), max(sizes))
            plt.xticks([math.log2(t) for t in ticks], [axes.size_label(t) for t in ticks])
            top = axes.nice_ticks(max(y for points in shown.values() for _, y in points))
            plt.yticks(top, [axes.short_number(t) for t in top])
            plt.ylim(0, top[-1])
            plt.title(f"GFLOPS over matrix size · {self.group_title}")
        else:
            plt.xticks([], [])
            plt.yticks([], [])
            plt.title("no shapes measured")
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
        self.device_key: str | None = None  # the first device of the group shown
        self.groups = device_groups(app)
        self.group: DeviceGroup | None = self.groups[0] if self.groups else None
        self.precision: str | None = None  # the highlighted row: its group of precisions is drawn over size
        self._dropped: list[str] = []  # the precision table's columns left out at this width
        self._dropped_cells: dict[str, list[tuple[str, str]]] = {}
        self._notes = ""
        self.runs: list[tuple[str, BenchDoc]] = []  # earlier runs, newest first
        self.baseline: tuple[str, BenchDoc] | None = None
        self.running = False
        self._cancel = threading.Event()

    def compose(self) -> ComposeResult:
        replayed = self.app.machine.replayed
        why = REPLAYED_RUN_OFF if replayed else None
        with Horizontal(id="bench-top"):
            yield Static("", id="bench-status", markup=False)
            if len(self.groups) > 1:
                yield Select(
                    [(Text(g.label), g.key) for g in self.groups],  # device names as written, never markup
                    value=self.groups[0].key,
                    allow_blank=False,
                    id="bench-device",
                    compact=True,
                )
            yield Button(
                "Run quick (R)", id="bench-run", variant="primary", compact=True, disabled=replayed, tooltip=why
            )
            yield Button("Run full (F)", id="bench-full", compact=True, disabled=replayed, tooltip=why)
            yield Button("Cancel (esc)", id="bench-cancel", variant="error", compact=True, disabled=True)
        bar = ProgressBar(id="bench-progress", show_eta=False)
        bar.display = False  # shown while a benchmark runs
        yield bar
        with Horizontal(id="bench-charts"):
            yield GflopsBars(id="bench-bars")
            with Vertical(id="bench-lines-box"):
                yield SizeLines(id="bench-lines")
                yield Static("", id="bench-legend")
        yield PlainTable(id="bench-table", cursor_type="row", zebra_stripes=True)
        plugins = PlainTable(id="bench-plugins", cursor_type="row", zebra_stripes=True)
        plugins.display = False  # shown when the run has plugin benchmarks that measured
        yield plugins
        with Horizontal(id="bench-bottom"):
            yield PlainTable(id="bench-history", cursor_type="row")
            yield Static("", id="bench-notes", markup=False)

    def on_mount(self) -> None:
        self.device_key = self.group.first["key"] if self.group else None
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
            self._status("replayed: spec peaks only, never measured · Run is off")
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
        dev = self._shown_entry(data)
        # Empty charts would only take the table's rows (a replay measures nothing): shown when there is data.
        self.query_one("#bench-charts").display = bool(
            dev and (dev.get("peak_gflops_by_precision") or dev.get("results"))
        )
        self.query_one(GflopsBars).show(dev)
        self._show_lines(dev)
        self._fill_table(dev)
        not_measured = self._fill_plugins(dev)
        self._fill_history()
        notes = []
        if self.group is not None and len(self.group.members) > 1:
            notes.append(
                f"{self.group.label}: one model, shown once; the figures are {self.device_key}'s"
                + (", the spread column covers every member that measured" if self._spread() else "")
            )
        if dev is not None:
            notes.append(bandwidth_line(dev))
            notes += precision_rows(dev)[1] + mamf_lines(dev) + [f"note: {n}" for n in dev.get("notes") or []]
            notes += [f"plugin benchmark {line}" for line in not_measured]
        self._notes = "\n".join(notes) or "select an earlier run (enter) to compare"
        self._show_notes()

    def _show_notes(self) -> None:
        dropped = self.dropped_text()
        self.query_one("#bench-notes", Static).update(f"{dropped}\n{self._notes}" if dropped else self._notes)

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

    def _shown_entry(self, data: BenchDoc | None) -> dict[str, Any] | None:
        """The group's first member with an entry in `data` (its figures are the ones drawn)."""
        if not data or self.group is None:
            return None
        for key in self.group.keys:
            entry = _device_entry(data, key)
            if entry is not None:
                self.device_key = key
                return entry
        return None

    def _spread(self) -> dict[str, tuple[float, float, int]]:
        """precision -> (lowest, highest best GFLOPS, members measured) over the group, where two or more did."""
        if not self.current or self.group is None or len(self.group.members) < 2:
            return {}
        best: dict[str, list[float]] = {}
        for key in self.group.keys:
            for p, value in ((_device_entry(self.current, key) or {}).get("peak_gflops_by_precision") or {}).items():
                if value is not None:
                    best.setdefault(p, []).append(value)
        return {p: (min(v), max(v), len(v)) for p, v in best.items() if len(v) > 1}

    def _show_lines(self, dev: dict[str, Any] | None) -> None:
        lines = self.query_one(SizeLines)
        lines.show(dev, self.precision)
        legend = Text.assemble(*((f"━━ {name}   ", f"rgb({r},{g},{b})") for name, (r, g, b) in lines.legend))
        self.query_one("#bench-legend", Static).update(legend if lines.legend else "")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "bench-table" and event.row_key is not None and event.row_key.value:
            before = precision_group(self.precision)[1]
            self.precision = str(event.row_key.value)
            self._show_notes()
            if precision_group(self.precision)[1] != before:  # only a new group changes the chart
                self._show_lines(self._shown_entry(self.current))

    def _fill_table(self, dev: dict[str, Any] | None) -> None:
        table = self.query_one("#bench-table", DataTable)
        table.clear(columns=True)
        self._table_dev = dev
        baseline = self.baseline
        compare = _device_entry(baseline[1], self.device_key) if baseline else None
        header = list(HEADER)
        if baseline and compare is not None:
            header.append(f"vs {baseline[0]}")
        spread = self._spread()
        if spread and self.group is not None:
            header.append(f"best across {self.group.key}")
        rows: list[list[str]] = []
        before = (compare or {}).get("peak_gflops_by_precision") or {}
        now = (dev or {}).get("peak_gflops_by_precision") or {}
        for row in precision_rows(dev)[0] if dev is not None else []:
            p = row[0]
            if compare is not None:
                ratio = now[p] / before[p] if now.get(p) and before.get(p) else None
                row = row + ["–" if ratio is None else f"{ratio:.2f}x"]
            if spread:
                low, high, n = spread.get(p, (None, None, 0))
                row = row + ["–" if low is None else f"{low:,.1f}–{high:,.1f} ({n})"]
            rows.append(row)
        # Too narrow for every column: whole columns go, in NARROW_DROP's order, never a cut figure; the
        # last column names how many went, and the highlighted precision's dropped cells are in the notes.
        width = (table.size.width or self.size.width or 80) - 2  # the vertical scrollbar
        kept, self._dropped = fit_columns(header, rows, width, NARROW_DROP, marker=6)
        for i in kept:
            table.add_column(header[i], key=header[i])
        if self._dropped:
            table.add_column(dropped_marker(self._dropped), key="dropped")
        self._dropped_cells = {row[0]: [(h, row[header.index(h)]) for h in self._dropped] for row in rows}
        for row in rows:
            cells = [Text(row[i]) for i in kept] + ([Text("")] if self._dropped else [])
            table.add_row(*cells, key=row[0])

    def dropped_text(self) -> str:
        """The highlighted precision's cells of the columns left out at this width (empty when none were)."""
        cells = self._dropped_cells.get(self.precision or "", [])
        if not cells:
            return ""
        return f"{self.precision}: " + " · ".join(f"{h} {v}" for h, v in cells)

    def on_resize(self) -> None:
        if self.is_mounted and hasattr(self, "_table_dev"):
            table = self.query_one("#bench-table", DataTable)
            row = table.cursor_row
            self._fill_table(self._table_dev)
            table.move_cursor(row=row)
            self._show_notes()

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
            self.group = next((g for g in self.groups if g.key == event.value), self.group)
            self.device_key = self.group.first["key"] if self.group else None
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
            self.app.notify(REPLAYED_RUN_OFF, severity="information")
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
