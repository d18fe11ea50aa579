"""The Recommendations view: the exported settings with their reasons, a TOML preview, and the export action.

It calls the same action as `gpudash export` (gpudash.actions.export: export_settings, write_export), so the
file it writes is the CLI's file, and previews the same text (gpudash.render.export). On first show it recommends from spec facts only (`--bench none`: instant, runs
nothing); "Measure" re-runs with probes, the quick benchmark, checks and the memory trace in a thread worker
(each in gpudash's child-process runner), the same as a default `gpudash export`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Input, Static

from gpudash.render.short_forms import at_word, without_aside
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.actions.export import Gathered
    from gpudash.tui.app import GpudashApp


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "n/a" if value is None else str(value)


# From this width the TOML preview stands beside the settings; below, the settings take the width (x writes
# the file, whose text the preview shows).
PREVIEW_AT = 110


class RecommendView(Vertical):
    """Settings table (setting, value, provenance), the highlighted row's reason, the TOML, and actions."""

    BINDINGS = [
        Binding("x", "export", "Export", tooltip="write the settings file (the same file as `gpudash export`)"),
        Binding("R", "measure", "Measure", tooltip="re-run with probes, a quick benchmark and checks"),
    ]

    app: GpudashApp

    def __init__(self, app: GpudashApp) -> None:
        super().__init__(id="recommend")
        self.gathered: Gathered | None = None
        self.bench = "none"

    def compose(self) -> ComposeResult:
        yield Static("recommending…", id="rec-status", markup=False)
        with Horizontal(id="rec-body"):
            yield PlainTable(id="rec-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="rec-preview-box") as box:
                box.border_title = "TOML preview"
                yield Static("", id="rec-preview", markup=False)
        yield Static("", id="rec-reason", markup=False)
        with Horizontal(id="rec-actions"):
            yield Static("write to", id="rec-path-label")
            yield Input(value="gpudash.toml", placeholder="file to write (.toml or .json)", id="rec-path", compact=True)
            yield Button("Export (x)", id="rec-export", variant="primary", compact=True)
            yield Button("Measure (R)", id="rec-measure", compact=True)

    def on_mount(self) -> None:
        self.recompute("none")

    # Computing -----------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="recommend", exit_on_error=False, description="recommend settings")
    def recompute(self, bench: str) -> None:
        from gpudash.actions.export import export_settings

        def status(message: str) -> None:
            self.app.from_worker(self._status, f"{message}…")

        try:
            # Plugin load errors stay in the records: stderr would tear the screen.
            gathered = export_settings(self.app.session, bench=bench, status=status, on_plugin_error=None)
        except Exception as exc:  # shown, never fatal to the dashboard
            self.app.from_worker(self._status, f"recommendation failed: {exc}")
            return
        self.app.from_worker(self.show, gathered, bench)

    def _status(self, text: str) -> None:
        self.query_one("#rec-status", Static).update(text)

    def show(self, gathered: Gathered, bench: str) -> None:
        from gpudash.render.export import render

        self.gathered, self.bench = gathered, bench
        settings = gathered.settings
        head = settings.header
        how = "spec facts only (press R to measure)" if bench == "none" else f"measured ({bench})"
        # The machine label's aside (a replay's origin) is in the line above every view.
        self._status(f"{head['device']} ({head['device_key']}, {without_aside(self.app.machine.label)}) · {how}")
        self._fill_table()
        self.query_one("#rec-preview", Static).update(render(settings, "toml"))
        if settings.sections:
            self._show_reason(next(iter(settings.items()))[0])

    def _fill_table(self) -> None:
        """Setting, provenance, value: the value last, ending at a word where it is wider than the room left
        (the line below then shows it whole), never cut mid-word at the table's edge ("bf16-mix")."""
        if self.gathered is None:
            return
        width = self.size.width or self.app.size.width
        self.query_one("#rec-preview-box").display = width >= PREVIEW_AT  # else the table would cut values
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns("setting", "provenance", "value")
        rows = [
            (dotted, setting.provenance, str(_shown(setting.value)))
            for dotted, setting in self.gathered.settings.items()
        ]
        widths = [max([len(title)] + [len(r[i]) for r in rows]) for i, title in enumerate(("setting", "provenance"))]
        table_width = width - 2 if width < PREVIEW_AT else (width - 2) * 3 // 5  # padding; #rec-table's 3fr of 5
        room = max(len("value"), table_width - sum(w + 2 for w in widths) - 2 - 2)  # cell padding, scrollbar
        self._cut = {dotted for dotted, _, value in rows if len(value) > room}
        for dotted, provenance, value in rows:
            table.add_row(dotted, provenance, at_word(value, room), key=dotted)
        if rows:
            table.move_cursor(row=min(row, len(rows) - 1))

    def on_resize(self) -> None:
        if self.gathered is not None:
            self._fill_table()

    def _show_reason(self, dotted: str) -> None:
        if self.gathered is None:
            return
        try:
            setting = self.gathered.settings.get(dotted)
        except KeyError:
            return
        whole = f" = {_shown(setting.value)}" if dotted in getattr(self, "_cut", ()) else ""  # cut in the table
        self.query_one("#rec-reason", Static).update(f"{dotted}{whole} [{setting.provenance}]: {setting.reason}")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value:
            self._show_reason(event.row_key.value)

    # Actions -------------------------------------------------------------------------------------

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "rec-export":
            self.action_export()
        elif event.button.id == "rec-measure":
            self.action_measure()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_export()

    def action_measure(self) -> None:
        if self.app.machine.replayed:
            self.app.notify(
                "a replayed machine is never measured; the memory trace and checks still run", severity="information"
            )
        self.recompute("quick")

    def action_export(self) -> None:
        from gpudash.actions.export import write_export
        from gpudash.errors import GpudashError

        if self.gathered is None:
            self.app.notify("still recommending; try again in a moment", severity="warning")
            return
        path = self.query_one("#rec-path", Input).value.strip()
        if not path or path == "-":
            self.app.notify("enter a file name to write", severity="error")
            return
        fmt = "json" if path.lower().endswith(".json") else "toml"
        try:
            message = write_export(self.gathered.settings, path, fmt)
        except GpudashError as exc:
            self.app.notify(str(exc), severity="error")
            return
        self.app.notify(message)
