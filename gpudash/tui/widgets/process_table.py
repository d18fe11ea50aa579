"""The process panel: every GPU process with nvitop's columns, sortable and filterable, kept in place.

Sorting: `s` steps through the sort keys, `S` flips the order, and a click on a column header sorts by
it. `/` opens the filter (every word must appear in the pid, user, GPU, type or command); escape clears
it. The panel's note says what is hidden or n/a, and why. The dashboard's `t` shows the rows as a tree
(`ancestry` holds each pid's ancestors), space tags processes (`tagged`, marked `*` before the pid), and
left/right scroll a long command sideways (`command_offset`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from gpudash.models import DeviceInfo, Sample
from gpudash.render import monitor
from gpudash.render import processes as proc_text
from gpudash.render.formatting import NA
from gpudash.render.idle import IDLE_MARK, idle_note
from gpudash.render.memory_units import MIB
from gpudash.tui.widgets.bars import Palette
from gpudash.tui.widgets.live_table import LiveColumn, LiveTable, Row

COMMAND_MIN = 12  # the command column never gets narrower; the table scrolls sideways instead
COMMAND_STEP = 8  # columns one left/right key moves a long command
TAG = "*"


class ProcessTable(LiveTable):
    """The table itself; the panel around it owns the filter and the note."""

    BINDINGS = [
        Binding("right", "scroll_command(1)", "Command →", show=False, tooltip="scroll long commands left"),
        Binding("left", "scroll_command(-1)", "Command ←", show=False, tooltip="scroll long commands back"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sort_id = proc_text.DEFAULT_SORT
        self.reverse = False
        self.query_text = ""
        self.shown_rows: list[proc_text.ProcessRow] = []  # shown, in order
        self.total = 0  # listed before the filter
        self.missing: dict[str, str] = {}  # GPU label -> why its processes are n/a
        self._all: list[proc_text.ProcessRow] = []
        self._palette: Palette | None = None
        self.ancestry: Mapping[int, proc_text.Ancestors] | None = None  # None: a flat list
        self.tagged: set[int] = set()  # pids
        self.command_offset = 0  # columns of every command scrolled out on the left
        self.foreign: set[int] = set()  # pids listed twice running that this PID namespace does not have
        self._unseen: set[int] = set()  # pids of the last reading this PID namespace does not have
        self.idle_keys: set[str] = set()  # GPUs allocated but idle (gpudash.allocation.idle): marked IDLE_MARK
        self.exact_memory = False  # the dashboard's `m`: GPU-MEM to the MiB ("10240MiB"), as on the device rows
        self._longest_command = 0

    @property
    def palette(self) -> Palette:
        if self._palette is None:
            self._palette = Palette.of(self.app)
        return self._palette

    @property
    def listed_rows(self) -> list[proc_text.ProcessRow]:
        """Every row of the last reading, before the filter."""
        return list(self._all)

    @property
    def highlighted(self) -> proc_text.ProcessRow | None:
        key = self.highlighted_key
        return next((r for r in self.shown_rows if r.key == key), None)

    def show_processes(
        self, devices: Sequence[DeviceInfo], samples: Mapping[str, Sample], labels: Mapping[str, str]
    ) -> None:
        self._all, self.missing = proc_text.process_rows(devices, samples, labels)
        unseen = proc_text.not_here(self._all)
        # Listed in two readings running yet never here: not a process that exited in between, but a host pid
        # seen from a container without the host's PID namespace.
        self.foreign = unseen & self._unseen
        self._unseen = unseen
        self.redraw()

    def sort_by(self, sort_id: str, reverse: bool | None = None) -> None:
        self.sort_id = sort_id
        self.reverse = self.reverse if reverse is None else reverse
        self.redraw()

    def filter_by(self, text: str) -> None:
        self.query_text = text.strip()
        self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        if not self.is_mounted:
            return
        self.total = len(self._all)
        shown = proc_text.filter_rows(self._all, self.query_text)
        ordered = proc_text.sort_rows(shown, self.sort_id, self.reverse)
        self._longest_command = 0
        listed = {r.proc.pid for r in self._all}
        self.tagged &= listed  # a tagged process that is gone is no longer a target
        if self.ancestry is None:
            entries = [proc_text.TreeEntry(r, r.proc.pid, r.proc.name, "") for r in ordered]
        else:
            entries = proc_text.tree_entries(ordered, self.ancestry)
        self.shown_rows = [e.row for e in entries if e.row is not None]
        columns = proc_text.columns_for(self._all)
        texts = [self._texts(e, columns) for e in entries]
        widths = [max([len(self._header_label(c))] + [len(t[i]) for t in texts]) for i, c in enumerate(columns)]
        scrolling = len(self.shown_rows) > max(1, self.size.height - 1)
        room = (self.size.width or self.app.size.width) - sum(w + 1 for w in widths[:-1]) - 1 - int(scrolling)
        widths[-1] = max(COMMAND_MIN, min(widths[-1], room))
        live_columns = [LiveColumn(c.id, self._header(c, w), w + 1) for c, w in zip(columns, widths)]
        rows: list[Row] = [
            (e.key, [self._cell(t, c, w) for t, c, w in zip(text, columns, widths)]) for e, text in zip(entries, texts)
        ]
        self.show(live_columns, rows)

    def _texts(self, entry: proc_text.TreeEntry, columns: tuple[proc_text.Column, ...]) -> list[str]:
        texts = proc_text.tree_cells(entry, columns)
        ids = [c.id for c in columns]
        if entry.pid in self.tagged and entry.row is not None:
            texts[0] = TAG + texts[0]
        if entry.row is not None and entry.row.device_key in self.idle_keys and "gpu" in ids:
            texts[ids.index("gpu")] += IDLE_MARK
        if self.exact_memory and entry.row is not None and "gpu_mem" in ids:
            used = entry.row.proc.memory_used_bytes
            texts[ids.index("gpu_mem")] = NA if used is None else f"{used // MIB}MiB"
        self._longest_command = max(self._longest_command, len(texts[-1]))
        if self.command_offset:
            texts[-1] = "…" + texts[-1][self.command_offset + 1 :] if len(texts[-1]) > self.command_offset else "…"
        return texts

    def action_scroll_command(self, step: int) -> None:
        """Move every command sideways by COMMAND_STEP columns (never past the longest one's end)."""
        limit = max(0, self._longest_command - COMMAND_MIN)
        offset = max(0, min(limit, self.command_offset + step * COMMAND_STEP))
        if offset != self.command_offset:
            self.command_offset = offset
            self.redraw()

    def toggle_tag(self) -> int | None:
        """Tag or untag the highlighted process (by pid, so all its GPUs' rows), then step down a row."""
        row = self.highlighted
        if row is None:
            return None
        self.tagged ^= {row.proc.pid}
        self.redraw()
        self.action_cursor(1)
        return row.proc.pid

    def _header_label(self, column: proc_text.Column) -> str:
        if column.id == "command" and self.command_offset:
            return f"{column.header} +{self.command_offset}"  # says the commands are scrolled, and by how much
        if column.id != self.sort_id:
            return column.header
        natural = proc_text.SORT_BY_ID[column.id].descending
        return column.header + ("▼" if natural != self.reverse else "▲")

    def _header(self, column: proc_text.Column, width: int) -> Text:
        label = self._header_label(column)
        label = label.rjust(width) if column.right else label
        return Text(" " + label, style="bold reverse" if column.id == self.sort_id else "bold")

    def _cell(self, text: str, column: proc_text.Column, width: int) -> Text:
        text = monitor.clip(text, width)
        text = text.rjust(width) if column.right else text
        style = self.palette.muted if text.strip() == NA else ""
        return Text(" " + text, style=style)

    def on_live_table_header_selected(self, event: LiveTable.HeaderSelected) -> None:
        column = event.column_key
        if column in proc_text.SORT_BY_ID:
            event.stop()
            self.sort_by(column, reverse=(not self.reverse) if column == self.sort_id else False)


class ProcessPanel(Vertical):
    """The table, a one-line note (what is hidden, n/a, or how to sort), and the filter when open."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._note: str | None = None
        self._told_foreign = False
        self._idle_note = ""
        self._filter: Input | None = None

    def compose(self) -> ComposeResult:
        yield ProcessTable(id="proc-table")
        yield Static("", id="proc-note", markup=False)
        # The filter's Input is mounted when first opened (open_filter), not on the first frame.

    @property
    def table(self) -> ProcessTable:
        return self.query_one(ProcessTable)

    def show_processes(
        self, devices: Sequence[DeviceInfo], samples: Mapping[str, Sample], labels: Mapping[str, str]
    ) -> None:
        watch = getattr(self.app, "idle", None)  # the app judges every reading, shown or not
        flagged = {s.key: s for s in watch.flagged()} if watch is not None else {}
        ordered = [flagged[d.key] for d in devices if d.key in flagged]
        self._idle_note = idle_note(ordered, labels, watch.rule) if watch is not None else ""
        self.table.idle_keys = set(flagged)
        self.table.show_processes(devices, samples, labels)
        self.update_note()

    def update_note(self) -> None:
        table = self.table
        parts = []
        if table.query_text:
            parts.append(
                f"filter “{table.query_text}”: {len(table.shown_rows)} of {table.total} (/ edits, escape clears)"
            )
        elif table.total == 0 and not table.missing:
            parts.append("no GPU processes")
        if table.foreign:
            parts.append(proc_text.CONTAINER_NOTE)
            if not self._told_foreign:  # the whole hint once, where it wraps; the note keeps the short form
                self._told_foreign = True
                self.app.notify(proc_text.CONTAINER_HINT, severity="warning", timeout=30)
        if self._idle_note:
            parts.append(self._idle_note)
        if table.tagged:
            parts.append(f"{len(table.tagged)} tagged: I/T/K signal them together, space untags")
        if table.missing:
            gone = ", ".join(f"GPU {label}: {why}" for label, why in table.missing.items())
            parts.append(f"processes n/a on {gone}")
        note = self.query_one("#proc-note", Static)
        text = " · ".join(parts)
        if text != self._note:  # unchanged: no repaint, no relayout
            self._note = text
            note.update(text)
            note.display = bool(parts)

    # Filter -------------------------------------------------------------------------------------

    async def open_filter(self) -> None:
        field = self._filter
        if field is None:
            field = self._filter = Input(
                placeholder="filter: words in pid, user, GPU, type or command · enter keeps it, escape clears",
                id="proc-filter",
            )
            await self.mount(field)
        field.value = self.table.query_text
        field.display = True
        field.focus()

    def clear_filter(self) -> None:
        field = self._filter
        if field is not None:
            field.value = ""
            field.display = False
        self.table.filter_by("")
        self.update_note()
        self.table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "proc-filter":
            event.stop()
            self.table.filter_by(event.value)
            self.update_note()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "proc-filter":
            event.stop()
            event.input.display = False
            self.table.focus()

    def on_key(self, event: events.Key) -> None:
        field = self._filter
        if event.key == "escape" and ((field is not None and field.has_focus) or self.table.query_text):
            event.stop()
            self.clear_filter()
