"""The Plugins view: every plugin found, loaded or failed, and why (the listing of `gpudash plugins`, from the
same action: gpudash.actions.plugins).

Loading imports the plugin modules (never torch: plugins import it inside `run`), so it happens in a thread
worker. Load errors are collected here instead of printed, which would tear the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from gpudash.render.plugins import explain, origin_text, provides_text
from gpudash.tui.widgets.plain_table import PlainTable

if TYPE_CHECKING:
    from gpudash.actions.session import Session
    from gpudash.plugin_manager import PluginRecord
    from gpudash.tui.app import GpudashApp

Loader = Callable[["Session"], list["PluginRecord"]]


def load_plugin_records(session: Session) -> list[PluginRecord]:
    from gpudash.actions.plugins import list_plugins

    return list_plugins(session, on_error=None).records  # errors stay in the records: stderr would tear the screen


def status_of(record: PluginRecord) -> Text:
    if not record.loaded:
        return Text("failed", style="bold red")
    if record.errors:
        return Text("loaded, with errors", style="bold yellow")
    return Text("loaded", style="green")


class PluginsView(Vertical):
    BINDINGS = [Binding("R", "reload", "Reload plugins", tooltip="look for plugins again")]

    app: GpudashApp

    def __init__(self, app: GpudashApp, loader: Loader | None = None) -> None:
        super().__init__(id="plugins")
        self.loader = loader or load_plugin_records
        self.records: list[PluginRecord] = []

    def compose(self) -> ComposeResult:
        yield Static("looking for plugins…", id="plugins-status", markup=False)
        yield PlainTable(id="plugins-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="plugins-detail", markup=False)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("name", "version", "from", "provides", "status")
        self.action_reload()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="plugins", exit_on_error=False, description="load plugins")
    def _load(self) -> None:
        try:
            records = self.loader(self.app.session)
        except Exception as exc:  # a bad plugin_dirs entry, for one: shown, never fatal
            self.app.from_worker(self._status, f"could not list plugins: {exc}")
            return
        self.app.from_worker(self.show, records)

    def show(self, records: list[PluginRecord]) -> None:
        self.records = list(records)
        table = self.query_one(DataTable)
        table.clear()
        for i, record in enumerate(self.records):
            table.add_row(
                record.name,
                record.version or "-",
                origin_text(record),
                provides_text(record.provides),
                status_of(record),
                key=str(i),
            )
        failed = sum(not r.loaded for r in self.records)
        count = f"{len(self.records)} plugin{'' if len(self.records) == 1 else 's'}"
        self._status(f"{count}, {failed} failed to load · R reloads")
        self.query_one("#plugins-detail", Static).update(
            explain(self.records[0]) if self.records else "no plugins found (GPUDASH_LOAD_PLUGINS may exclude them)"
        )

    def _status(self, text: str) -> None:
        self.query_one("#plugins-status", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            index = int(event.row_key.value)
            if index < len(self.records):
                self.query_one("#plugins-detail", Static).update(explain(self.records[index]))
