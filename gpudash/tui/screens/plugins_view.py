"""The Plugins view: every plugin found, loaded or failed, and why (the same listing as `gpudash plugins`).

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

if TYPE_CHECKING:
    from gpudash.plugin_manager import PluginRecord
    from gpudash.tui.app import GpudashApp

Loader = Callable[[list], list["PluginRecord"]]


def load_plugin_records(plugin_dirs: list) -> list[PluginRecord]:
    from gpudash.plugin_manager import list_plugins, make_plugin_manager

    return list_plugins(make_plugin_manager(plugin_dirs, on_error=None))


def status_of(record: PluginRecord) -> Text:
    if not record.loaded:
        return Text("failed", style="bold red")
    if record.errors:
        return Text("loaded, with errors", style="bold yellow")
    return Text("loaded", style="green")


def explain(record: PluginRecord) -> str:
    from gpudash.cli.plugins_cmd import origin_text, provides_text

    lines = [f"{record.name} {record.version or ''}".rstrip() + f" · {origin_text(record)}"]
    if record.target:
        lines.append(f"module: {record.target}")
    lines.append(f"hooks: {', '.join(record.hooks) or 'none'} · provides: {provides_text(record.provides)}")
    for kind in ("checks", "benchmarks", "kernels"):
        if record.provides.get(kind):
            lines.append(f"{kind}: {', '.join(record.provides[kind])}")
    lines.extend(f"why: {error}" for error in record.errors)
    return "\n".join(lines)


class PluginsView(Vertical):
    BINDINGS = [Binding("R", "reload", "Reload plugins", tooltip="look for plugins again")]

    app: GpudashApp

    def __init__(self, app: GpudashApp, loader: Loader | None = None) -> None:
        super().__init__(id="plugins")
        self.loader = loader or load_plugin_records
        self.records: list[PluginRecord] = []

    def compose(self) -> ComposeResult:
        yield Static("looking for plugins…", id="plugins-status", markup=False)
        yield DataTable(id="plugins-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="plugins-detail", markup=False)

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("name", "version", "from", "provides", "status")
        self.action_reload()

    def action_reload(self) -> None:
        self._load(list(self.app.config.get("plugin_dirs") or []))

    @work(thread=True, exclusive=True, group="plugins", exit_on_error=False, description="load plugins")
    def _load(self, plugin_dirs: list) -> None:
        try:
            records = self.loader(plugin_dirs)
        except Exception as exc:  # a bad plugin_dirs entry, for one: shown, never fatal
            self.app.from_worker(self._status, f"could not list plugins: {exc}")
            return
        self.app.from_worker(self.show, records)

    def show(self, records: list[PluginRecord]) -> None:
        from gpudash.cli.plugins_cmd import origin_text, provides_text

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
