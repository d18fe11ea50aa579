"""The Dashboard view: the host line, every device on one line each, and every GPU process below.

Dense by default, like nvitop: 8 GPUs and their processes fit 80x24, 16 fit 160x48. The device table takes
the rows it needs (up to what leaves the process panel six rows), the process panel the rest; both scroll
rather than lose rows. Enter (or D) on a device opens its detail in place: the card with its history chart
and every field with the reason for each n/a; escape or D returns.

Processes are signalled from here (I: SIGINT, T: SIGTERM, K: SIGKILL) through gpudash.actions.processes,
after a confirmation; space tags several, and a signal key then goes to every tagged process after one
confirmation. Never on a replayed machine or with --readonly (tagging neither), and each refusal says why in
one line. Enter on a process opens its screen; t shows the list as a process tree (not on a replay, whose
process tree was not recorded); left/right scroll long commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from gpudash.info import device_status
from gpudash.models import LOST, Sample
from gpudash.render import processes as proc_text
from gpudash.render.driver_facts import driver_parts
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.host_line import HostLine
from gpudash.tui.widgets.live_table import LiveTable
from gpudash.tui.widgets.process_table import ProcessPanel, ProcessTable

if TYPE_CHECKING:
    from gpudash.actions.processes import ProcessAncestry
    from gpudash.tui.app import GpudashApp
    from gpudash.tui.widgets.device_detail import DeviceDetail, StepDevice

PROCESS_ROWS_KEPT = 6  # the process panel's rows (header included) the device table never takes


class DashboardView(Vertical):
    BINDINGS = [
        Binding(
            "D", "toggle_detail", "Detail", show=False, tooltip="the highlighted device in full, or back to all devices"
        ),
        Binding(
            "s",
            "next_sort",
            "Sort",
            tooltip="sort processes by the next column: "
            + ", ".join(proc_text.COLUMN_BY_ID[k.id].header for k in proc_text.SORT_KEYS),
        ),
        Binding("S", "reverse_sort", "Reverse", show=False, tooltip="reverse the process order"),
        Binding("slash", "filter", "Filter", key_display="/", tooltip="filter processes (escape clears)"),
        Binding("I", "signal('SIGINT')", "SIGINT", show=False, tooltip="interrupt the process, as ctrl+c would"),
        Binding("T", "signal('SIGTERM')", "SIGTERM", tooltip="ask the highlighted process to exit (confirm first)"),
        Binding("K", "signal('SIGKILL')", "SIGKILL", tooltip="kill the highlighted process at once (confirm first)"),
        Binding("space", "tag", "Tag", show=False, tooltip="tag the process (signal several together)"),
        Binding("t", "toggle_tree", "Tree", show=False, tooltip="processes as a tree: each under its parent"),
        Binding("escape", "back", "Back", show=False, tooltip="back to all devices; clears the process filter"),
        Binding("m", "toggle_exact_memory", "MiB", show=False, tooltip="memory exact to the MiB, or rounded GiB"),
        Binding(
            "w", "toggle_wide", "Wide", show=False, tooltip="every host part and device column (+N› marks left out)"
        ),
    ]

    app: GpudashApp

    def __init__(self, app: GpudashApp) -> None:
        super().__init__(id="dashboard")
        self._devices = list(app.machine.devices)
        self._interval = app.refresh_interval
        self._window = app.history_seconds
        self._alerts = ""
        self._ancestry: ProcessAncestry | None = None  # while the tree view is on
        self._detail: DeviceDetail | None = None  # mounted when a device is first opened

    def compose(self) -> ComposeResult:
        machine = self.app.machine
        yield HostLine(machine.host.hostname, machine.replayed, id="host-line")
        # The dense part, children of this view itself: no container between (each one more on the first frame
        # is styled, laid out and drawn); the detail takes their place when a device is opened (_show_detail).
        yield DeviceTable(self._devices, id="dev-table")
        yield Static("", id="dash-alerts", markup=False)
        yield ProcessPanel(id="proc-panel")

    def on_mount(self) -> None:
        self.query_one("#dash-alerts", Static).display = False
        self._set_exact_memory(self.app.config["ui"]["memory_units"] == "MiB")
        self.app.samples_applied.subscribe(self, self.show_samples)
        self.app.machine_changed.subscribe(self, self.machine_changed)
        if self.app.latest:
            self.show_samples(self.app.latest)

    def focus_main(self) -> None:
        """What gets the focus when the tab is shown: the device table (or the open detail)."""
        detail = self._shown_detail()
        if detail is not None:
            detail.focus()
        else:
            self.device_table.focus()

    @property
    def device_table(self) -> DeviceTable:
        return self.query_one(DeviceTable)

    @property
    def process_table(self) -> ProcessTable:
        return self.query_one(ProcessTable)

    @property
    def detail_open(self) -> bool:
        return self._shown_detail() is not None

    def _shown_detail(self) -> DeviceDetail | None:
        """The detail, while it is shown in place of the dense part."""
        detail = self._detail
        return detail if detail is not None and detail.display else None

    def _show_detail(self, detail: bool) -> None:
        """The detail in place of the dense part (the device table, the alerts line, the process panel), or back."""
        with self.app.batch_update():
            self.device_table.display = not detail
            self.query_one("#dash-alerts", Static).display = not detail and bool(self._alerts)
            self.query_one(ProcessPanel).display = not detail
            if self._detail is not None:
                self._detail.display = detail

    # Readings -----------------------------------------------------------------------------------

    def show_samples(self, samples: dict[str, Sample]) -> None:
        if not all(node.display for node in self.ancestors_with_self):
            return  # another tab is showing; the app republishes the latest samples when this one is shown
        app = self.app
        with app.batch_update():
            host_line = self.query_one(HostLine)
            host_line.show_facts(driver_parts(app.machine.devices, app.machine.runtime, samples))
            host_line.show_load(app.host_load)
            detail = self._shown_detail()
            if detail is not None:
                if detail.device is not None:
                    detail.show_sample(samples.get(detail.device.key), app.machine.runtime, app.history)
                return
            table = self.device_table
            table.show_samples(samples)
            if self._ancestry is not None:
                pids = [p.pid for s in samples.values() for p in s.processes or []]
                self.process_table.ancestry = self._ancestry.of(pids)
            self.query_one(ProcessPanel).show_processes(table.devices, samples, table.labels)
            self._show_alerts(samples)
            self._fit_heights()

    def _show_alerts(self, samples: dict[str, Sample]) -> None:
        """One line naming lost GPUs, and devices whose whole reading failed (a hung driver call, say), with
        the reason: their rows have room for "LOST" or "n/a" only."""
        table = self.device_table
        lost = []
        for device in table.devices:
            sample = samples.get(device.key)
            status, reason = device_status(device, sample)
            kind = "CPU" if device.vendor == "cpu" else "GPU"
            label = f"{kind} {table.labels.get(device.key, device.index)}"
            if status == LOST:
                lost.append(f"{label} lost: {reason}")
            elif sample is not None and sample.unavailable.get("all"):
                lost.append(f"{label}: {sample.unavailable['all']}")
        text = " · ".join(lost)
        if text != self._alerts:  # unchanged: no repaint, no relayout
            self._alerts = text
            alerts = self.query_one("#dash-alerts", Static)
            alerts.update(text)
            alerts.display = bool(lost)

    def on_resize(self) -> None:
        self._fit_heights()

    def _fit_heights(self) -> None:
        """The device table as tall as its rows, but never into the process panel's last six rows."""
        table = self.device_table
        if not self.size.height:
            return
        host_rows = self.query_one(HostLine).styles.height
        taken = (int(host_rows.value) if host_rows is not None else 1) + (
            1 if self.query_one("#dash-alerts", Static).display else 0
        )  # host line (two rows with `w`), alerts
        room = self.size.height - taken - PROCESS_ROWS_KEPT
        wanted = len(table.row_keys) + 1
        height = max(2, min(wanted, room))
        if table.styles.height is None or table.styles.height.value != height:
            table.styles.height = height

    async def machine_changed(self, _machine: object = None) -> None:
        """torch's view may add devices (a GPU without NVML/amdsmi) or versions: rows and detail follow."""
        self._devices = list(self.app.machine.devices)
        self.device_table.set_devices(self._devices)
        detail = self._detail
        if detail is not None and detail.device is not None:
            await self._open_detail(detail.device.key)
        if self.app.latest:
            self.show_samples(self.app.latest)

    # Detail -------------------------------------------------------------------------------------

    def on_live_table_row_selected(self, event: LiveTable.RowSelected) -> None:
        if isinstance(event.table, ProcessTable):
            event.stop()
            self.open_process()
        elif isinstance(event.table, DeviceTable):
            event.stop()
            device = event.table.device_of(event.row_key)
            if device is not None:
                self.run_worker(self._open_detail(device.key), exclusive=True, group="detail")

    async def _open_detail(self, key: str) -> None:
        machine = self.app.machine
        device = next((d for d in machine.devices if d.key == key), None)
        if device is None:
            return
        source = "replayed" if machine.replayed else "live · " + "+".join(device.sources)
        detail = self._detail
        if detail is None:
            from gpudash.tui.widgets.device_detail import DeviceDetail

            detail = self._detail = DeviceDetail(interval_s=self._interval, window_s=self._window, id="dash-detail")
            detail.display = False
            await self.mount(detail)
        await detail.show_device(device, machine.runtime, self.app.torch_state, source)
        self._show_detail(True)
        detail.show_sample(self.app.latest.get(key), machine.runtime, self.app.history)
        detail.focus()

    def close_detail(self) -> None:
        self._show_detail(False)
        detail = self._detail
        if detail is not None and detail.device is not None:
            self.device_table.move_to_key(detail.device.key)
        self.device_table.focus()
        if self.app.latest:
            self.show_samples(self.app.latest)

    def action_toggle_detail(self) -> None:
        if self.detail_open:
            self.close_detail()
            return
        device = self.device_table.device_of(self.device_table.highlighted_key)
        if device is not None:
            self.run_worker(self._open_detail(device.key), exclusive=True, group="detail")

    def _set_exact_memory(self, exact: bool) -> None:
        self.query_one(HostLine).exact_memory = exact
        self.device_table.exact_memory = exact
        self.process_table.exact_memory = exact

    def action_toggle_exact_memory(self) -> None:
        """Memory to the MiB ("62771/81559MiB", as nvidia-smi) or rounded ("61/80G"); [ui] memory_units starts it."""
        self._set_exact_memory(not self.device_table.exact_memory)
        self.query_one(HostLine).show_load(self.app.host_load)
        self.device_table.redraw()
        self.process_table.redraw()

    def action_toggle_wide(self) -> None:
        """Every part of the host line (wrapping onto a second line) and every device column."""
        host_line = self.query_one(HostLine)
        host_line.show_all = not host_line.show_all
        host_line.show_load(self.app.host_load)
        table = self.device_table
        table.show_all = host_line.show_all
        table.redraw()
        if not table.show_all:
            table.scroll_to(x=0, animate=False)
        self._fit_heights()

    def action_back(self) -> None:
        if self.detail_open:
            self.close_detail()

    def on_step_device(self, message: StepDevice) -> None:
        detail = self._detail
        keys = [d.key for d in self.device_table.devices]
        if detail is None or detail.device is None or detail.device.key not in keys:
            return
        index = (keys.index(detail.device.key) + message.step) % len(keys)
        self.device_table.move_to_key(keys[index])
        self.run_worker(self._open_detail(keys[index]), exclusive=True, group="detail")

    # Processes ----------------------------------------------------------------------------------

    def open_process(self) -> None:
        """Enter on a process: its screen (command, directory, tree, environment, GPU memory over time)."""
        from gpudash.tui.screens.process_screen import ProcessScreen

        row = self.process_table.highlighted
        if row is None:
            return
        self.app.push_screen(ProcessScreen(row.proc.pid, dict(self.device_table.labels), recorded=row.proc))

    def action_next_sort(self) -> None:
        ids = [k.id for k in proc_text.SORT_KEYS]
        table = self.process_table
        table.sort_by(ids[(ids.index(table.sort_id) + 1) % len(ids)], reverse=False)
        self.app.notify(f"processes sorted by {proc_text.COLUMN_BY_ID[table.sort_id].header}", timeout=2)

    def action_sort_by(self, sort_id: str) -> None:
        self.process_table.sort_by(sort_id, reverse=False)

    def action_open_detail(self, key: str) -> None:
        self.device_table.move_to_key(key)
        self.run_worker(self._open_detail(key), exclusive=True, group="detail")

    def action_reverse_sort(self) -> None:
        table = self.process_table
        table.sort_by(table.sort_id, reverse=not table.reverse)

    async def action_filter(self) -> None:
        if self.detail_open:
            self.close_detail()
        await self.query_one(ProcessPanel).open_filter()

    def action_toggle_tree(self) -> None:
        table = self.process_table
        if self._ancestry is not None:
            self._ancestry, table.ancestry = None, None
            table.redraw()
            return
        from gpudash.actions import processes as process_action  # on first use: the first frame never signals

        ancestry = process_action.ProcessAncestry(self.app.session)
        if ancestry.refused:
            self.app.notify(f"tree view off: {ancestry.refused}", severity="warning")
            return
        self._ancestry = ancestry
        table.ancestry = ancestry.of([r.proc.pid for r in table.shown_rows])
        table.redraw()

    def action_tag(self) -> None:
        from gpudash.actions import processes as process_action

        refused = process_action.refusal(self.app.session)
        if refused:
            self.app.notify(f"not tagged: {refused}", severity="warning")
            return
        if self.process_table.toggle_tag() is None:
            self.app.notify("nothing to tag: no GPU process highlighted", severity="warning")
        self.query_one(ProcessPanel).update_note()

    def action_signal(self, name: str) -> None:
        from gpudash.actions import processes as process_action
        from gpudash.tui.screens.signal_dialog import SignalDialog

        session = self.app.session
        refused = process_action.refusal(session)
        if refused:
            self.app.notify(f"{name} not sent: {refused}", severity="warning")
            return
        table = self.process_table
        if table.tagged:
            pids = sorted(table.tagged)
        elif table.highlighted is not None:
            pids = [table.highlighted.proc.pid]
        else:
            self.app.notify(f"{name}: no process highlighted (the process panel is empty)", severity="warning")
            return
        targets = [process_action.identify(session, pid) for pid in pids]
        allowed = [t for t in targets if t.allowed]
        skipped = [t for t in targets if not t.allowed]
        if not allowed:
            self.app.notify(f"{name} not sent: " + "; ".join(str(t.why_not) for t in skipped), severity="warning")
            return
        rows = {r.proc.pid: r for r in table.shown_rows} | {r.proc.pid: r for r in table.listed_rows}

        def answered(send: bool | None) -> None:
            if not send:
                self.app.notify(f"{name} not sent: cancelled", timeout=2)
                return
            outcomes = [
                process_action.signal_process(session, t.pid, process_action.SIGNALS[name], create_time=t.create_time)
                for t in allowed
            ]
            failed = any(not o.sent for o in outcomes)
            for outcome in outcomes:
                self.app.notify(outcome.message, severity="error" if not outcome.sent else "information")
            if len(outcomes) > 1:
                sent = sum(o.sent for o in outcomes)
                self.app.notify(f"{name} sent to {sent} of {len(outcomes)} tagged processes",
                                severity="error" if failed else "information")  # fmt: skip
            table.tagged.clear()
            table.redraw()
            self.query_one(ProcessPanel).update_note()

        gpus = {t.pid: ",".join(r.gpu for r in table.listed_rows if r.proc.pid == t.pid) or "?" for t in allowed}
        ages = {t.pid: rows[t.pid].proc.elapsed_s if t.pid in rows else None for t in allowed}
        self.app.push_screen(SignalDialog(allowed, name, gpus, ages, skipped=skipped), answered)
