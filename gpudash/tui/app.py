"""The gpudash Textual app: views in tabs, live polling off the UI thread, torch loaded in the background.

Start-up order matters, because the first frame must never wait for torch: the app is built from a machine
discovered *without* torch, so the first frame appears at once; after it, a thread worker imports torch and merges its view, then
TorchViewReady refreshes the cards. Polling follows dolphie: one thread worker samples every device and
posts SamplesReady; the next poll is armed only when the last one has finished, so polls never overlap.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Provider
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from gpudash import devices, lifetime, store
from gpudash.actions.host import HostMonitor
from gpudash.actions.session import Session
from gpudash.allocation.idle import IdleRule, IdleWatch
from gpudash.config import defaults
from gpudash.devices import Machine
from gpudash.devices.host_load import HostLoad
from gpudash.history import History, capacity_for
from gpudash.models import Sample
from gpudash.process_history import ProcessHistory
from gpudash.tui import stylesheets, terminal_watch
from gpudash.tui import views as view_registry
from gpudash.tui.health_watch import HealthWatch
from gpudash.tui.messages import SamplesReady, TorchViewReady
from gpudash.tui.stylesheets import VIEWS_CSS
from gpudash.tui.views import ViewSpec
from gpudash.tui.widgets.footer_slot import FooterSlot
from gpudash.tui.widgets.title_bar import TitleBar
from gpudash.tui.widgets.view_tabs import ViewTabs

FOOTER_AT_THE_LATEST_S = 1.0  # the footer's keys, when the first reading is slower than that


def source_line(machine: Machine, torch_state: str) -> str:
    """Where the figures come from (live here, or which recording), shown above every view."""
    if machine.replayed:
        return machine.label
    torch = {"loading": "torch loading…", "failed": "torch n/a"}.get(torch_state) or f"torch {machine.runtime.torch}"
    return " · ".join([f"● live on {machine.host.hostname or 'this machine'}", torch, *machine.notes])


def _breakpoint_class(size: int, breakpoints: list[tuple[int, str]]) -> list[str]:
    """The class of the highest breakpoint `size` reaches, as Textual's Screen picks it on a resize."""
    for breakpoint, name in sorted(breakpoints, reverse=True):
        if size >= breakpoint:
            return [name]
    return []


def _gpudash_commands() -> type[Provider]:
    """gpudash's provider for the command palette, imported when the palette first asks (Textual calls this then,
    as it does for its own system commands): the first frame never needs it."""
    from gpudash.tui.commands import GpudashCommands

    return GpudashCommands


class _FirstScreen(Screen):
    """The dashboard's first screen. Its first resume does not restyle every widget, as Textual's screens do:
    each was styled when it was mounted, with this stylesheet, these classes (the breakpoints' too, see
    GpudashApp.get_default_screen) and this theme, so the walk changed no style (tests/test_start_weight.py
    compares every widget's styles with a full restyle's) and cost the first frame about 3 % of its CPU.
    Every later resume (after the help screen or a dialog) restyles as before."""

    # The first focus goes straight to the dashboard's device table (focus_view puts it there too). Textual's
    # "*" gave it to the tab bar first, then moved it: two restyles and a repaint on the first frame's path.
    AUTO_FOCUS = "#dev-table"
    _resumed = False

    def _update_auto_focus(self) -> None:
        if not self._resumed:  # at compose and the first resume; later Textual would focus the device table
            super()._update_auto_focus()  # even in a hidden view: _on_screen_resume focuses the shown one

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        if not self._resumed:
            event.refresh_styles = False
        super()._on_screen_resume(event)
        self._resumed = True
        app = self.app
        if self.focused is None and isinstance(app, GpudashApp):  # e.g. a view switched while help was on top
            tabs = self.query_one("#views", ViewTabs)
            app.call_after_refresh(app.focus_view, tabs.get_pane(tabs.active))


class GpudashApp(App[int]):
    CSS_PATH = ["app.tcss"]  # and, when first needed, the sheets of gpudash.tui.stylesheets
    TITLE = "gpudash"
    COMMANDS = App.COMMANDS | {_gpudash_commands}  # gpudash's own actions in the palette (ctrl+p)
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="quit gpudash"),
        Binding(
            "question_mark", "help", "Help", key_display="?", tooltip="this screen: keys, badges, n/a, data source"
        ),
        Binding("p", "toggle_pause", "Pause", tooltip="pause or resume live polling"),
        *(Binding(v.key, f"show_view('{v.id}')", v.title) for v in view_registry.VIEWS),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-normal")]  # below 120 columns cards drop the chart
    # Below 32 rows every row counts: the header goes and the tabs take one row (80x24 shows 8 GPUs).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    def __init__(self, session: Session, *, add_torch_view: Callable[[Machine], None] | None = None) -> None:
        super().__init__()
        self.session = session  # what the views' actions share: config, plugin directories, this machine
        self._store_warn = store.warn  # given back at unmount (the dashboard says it in a notification meanwhile)
        self.machine = session.machine(include_torch=False)
        self.config = session.config
        ui = self.config["ui"]
        self.refresh_interval: float = ui["refresh_interval"]
        self.history_seconds: float = ui["history_seconds"]
        self.history = History(capacity_for(self.history_seconds, self.refresh_interval))
        self.process_history = ProcessHistory(self.history.capacity)  # each GPU process's memory: its screen
        self.idle = IdleWatch(IdleRule.from_config(self.config))  # allocated but idle, over every reading
        self.latest: dict[str, Sample] = {}
        self.host_load: HostLoad | None = None  # None on a replayed machine, and before the first reading
        self._host = HostMonitor(session)
        self.views: list[ViewSpec] = list(view_registry.VIEWS)
        self.samples_applied: Signal[dict[str, Sample]] = Signal(self, "samples_applied")
        self.machine_changed: Signal[Machine] = Signal(self, "machine_changed")
        # Each GPU's health (device key -> DeviceHealth), read slower than telemetry (gpudash.tui.health_watch)
        self.health: dict[str, Any] = {}
        self.health_read = False  # a health reading has landed
        self.health_applied: Signal[dict[str, Any]] = Signal(self, "health_applied")
        self.health_watch = HealthWatch(self, self.config["health"]["read_interval_s"])
        self.torch_state = "skipped" if self.machine.replayed else "loading"
        self.paused = False
        self._add_torch_view = add_torch_view  # None: import torch, then devices.add_torch_view
        self._machine_lock = threading.Lock()  # the torch merge must not run in the middle of a poll
        self._poll_timer: Timer | None = None
        self._polling = False
        self._health_started = False  # the health watch starts once the first reading is shown
        # The first reading is taken from here on, while Textual starts and composes, not after the mount.
        self._first_reading: Future[tuple[dict[str, Sample], HostLoad | None]] | None = self._read_early()
        if ui["theme"] in self.available_themes:
            self.theme = ui["theme"]
        self.sub_title = self._sub_title()

    def get_default_screen(self) -> Screen:
        """Textual's default screen, born with the breakpoint classes of the terminal's size. Textual gave it
        them on its first Resize, after its widgets were mounted and styled, and restyled all of them then
        (about 5 % of the first frame's CPU); it now finds them set and restyles nothing. A later resize
        across a breakpoint changes them, and restyles, as before."""
        width, height = self.size
        classes = {
            name
            for size, points in ((width, self.HORIZONTAL_BREAKPOINTS), (height, self.VERTICAL_BREAKPOINTS))
            for name in _breakpoint_class(size, points or [])
        }
        return _FirstScreen(id="_default", classes=" ".join(sorted(classes)))

    def compose(self) -> ComposeResult:
        yield TitleBar("●", id="title-bar")
        # Kept as a reference: a query would search the active screen, which is the help screen while it is open.
        self._source = Static(
            source_line(self.machine, self.torch_state),
            id="source",
            classes="-replayed" if self.machine.replayed else "-live",
            markup=False,
        )
        yield self._source
        # The first view is built now, the others into their panes when first shown (on_view_tabs_activated).
        yield ViewTabs([(v.pane_id, v.title) for v in self.views], self.build_view(self.views[0]), id="views")
        self._footer = FooterSlot()  # Textual's footer and its keys come once the first reading is shown
        yield self._footer

    def on_mount(self) -> None:
        self.call_after_refresh(self._first_focus)
        if self.config["ui"]["theme"] not in self.available_themes:
            self.notify(
                f"unknown theme {self.config['ui']['theme']!r} in config; using {self.theme}", severity="warning"
            )
        self._start_poll()
        self.set_timer(FOOTER_AT_THE_LATEST_S, self._settle)  # a first reading that takes its time
        if not self.machine.replayed:
            self.call_after_refresh(self._load_torch_view)  # after the first frame, so it never waits for torch
        self._watch_terminal()
        store.warn = self._say_ignored  # stderr is not seen under the dashboard

    def _first_focus(self) -> None:
        """The first view's main widget, unless the screen's auto focus (_FirstScreen.AUTO_FOCUS) or the user
        has already put the focus somewhere."""
        if self.screen_stack[0].focused is None:
            self.focus_view(self.query_one(f"#{self.views[0].pane_id}"))

    def _settle(self) -> None:
        """After the first frame (or once the first reading is late): the footer's keys, and the end of the
        start mode that gpudash.cli.main began (gpudash.lifetime: the collector back on, the GIL's usual
        switch interval)."""
        self._footer.fill()
        lifetime.started()

    def on_unmount(self) -> None:
        store.warn = self._store_warn

    def _say_ignored(self, message: str) -> None:
        """Remembered results the views would read were ignored (a damaged file, say): a notification naming the
        file and why, where the command line prints a warning line. Called from worker threads too."""
        try:
            self.call_from_thread(self._notify_ignored, message)
        except RuntimeError:  # already on the app's own thread
            self._notify_ignored(message)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Textual's notification with its words shown as written: they carry file names, process names and
        plugins' errors, and markup would eat "[b]" and end the dashboard on "[/]" (MarkupError)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _notify_ignored(self, message: str) -> None:
        self.notify(message, title="remembered results ignored", severity="warning", timeout=15)

    def _watch_terminal(self) -> None:
        """End the dashboard when its terminal is gone but no SIGHUP came (gpudash.tui.terminal_watch)."""
        if self.is_headless:
            return
        fd = terminal_watch.stdin_terminal()
        if fd is None:
            return

        def check() -> None:
            if terminal_watch.hung_up(fd):
                self.exit(return_code=terminal_watch.EXIT_TERMINAL_GONE)

        self.set_interval(1.0, check, name="terminal watch")

    def _sub_title(self) -> str:
        where = "replayed" if self.machine.replayed else "live"
        return " · ".join([where, self.machine.host.hostname or "?", *(["paused"] if self.paused else [])])

    # Polling -----------------------------------------------------------------------------------

    def _start_poll(self) -> None:
        self._poll_timer = None
        if self._polling or self.paused:
            return
        self._polling = True
        self._poll()

    def _read(self) -> tuple[dict[str, Sample], HostLoad | None]:
        with self._machine_lock:
            samples = self.machine.sample_all()
        return samples, self._host.read()

    def _read_early(self) -> Future[tuple[dict[str, Sample], HostLoad | None]]:
        """The first reading, in a thread of its own begun before Textual starts the app, so that it is
        ready when the first poll asks (a poll waited for the whole mount and then read, on the first frame's
        path). The reading waits mostly on the driver's child, which runs on the other core."""
        future: Future[tuple[dict[str, Sample], HostLoad | None]] = Future()

        def read() -> None:
            try:
                future.set_result(self._read())
            except BaseException as exc:  # handed to the first poll, which reports it as any poll's failure
                future.set_exception(exc)

        threading.Thread(target=read, name="gpudash first reading", daemon=True).start()
        return future

    @work(thread=True, group="poll", exit_on_error=False, description="sample every device")
    def _poll(self) -> None:
        first, self._first_reading = self._first_reading, None
        samples, host_load = first.result() if first is not None else self._read()
        self.post_message(SamplesReady(samples, host_load))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "poll" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self._polling = False
            if not self._health_started:  # after the first frame's reading: its 60 driver calls per GPU
                self._health_started = True  # would hold the driver's child while that reading waits
                self.call_after_refresh(self.health_watch.start)
                self.call_after_refresh(self._settle)
            if event.state == WorkerState.ERROR:
                self.notify(f"sampling failed: {worker.error}", severity="error")
            if not self.paused:
                self._poll_timer = self.set_timer(self.refresh_interval, self._start_poll)
        elif worker.group == "torch" and event.state == WorkerState.ERROR:
            self.post_message(TorchViewReady(error=str(worker.error)))

    def on_samples_ready(self, message: SamplesReady) -> None:
        self.latest = message.samples
        self.host_load = message.host_load
        totals = {d.key: d.memory_total_bytes for d in self.machine.devices}
        self.history.record(message.samples, totals)
        self.process_history.record(message.samples)
        self.idle.record(message.samples)
        self.samples_applied.publish(message.samples)

    # torch -------------------------------------------------------------------------------------

    @work(thread=True, group="torch", exit_on_error=False, description="import torch and merge its view")
    def _load_torch_view(self) -> None:
        if self._add_torch_view is None:
            # The slow part (about a second) when a GPU may be there; polls go on meanwhile.
            torch = importlib.import_module("torch") if devices.torch_could_see_gpus() else None
            with self._machine_lock:
                devices.add_torch_view(self.machine, torch)
        else:
            with self._machine_lock:
                self._add_torch_view(self.machine)
        self.post_message(TorchViewReady())

    def on_torch_view_ready(self, message: TorchViewReady) -> None:
        if message.error:
            self.machine.notes.append(f"torch: {message.error}")
        self.torch_state = "ready" if self.machine.runtime.torch else "failed"
        self._source.update(source_line(self.machine, self.torch_state))
        self.machine_changed.publish(self.machine)

    def from_worker(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run `callback` on the UI thread from a view's worker thread; quietly nothing once the app is
        shutting down (a long probe or benchmark may finish after the user quit)."""

        def run() -> Exception | None:
            try:
                callback(*args)
            except Exception as exc:  # the callback's own error, told apart from the app going away
                return exc
            return None

        try:
            error = self.call_from_thread(run)
        except RuntimeError:
            return
        if error is not None:
            raise error  # in the worker's thread: its state turns to ERROR and its view can say so

    # Actions -----------------------------------------------------------------------------------

    def action_help(self) -> None:
        from gpudash.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused and self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        elif not self.paused:
            self._start_poll()
        self.sub_title = self._sub_title()

    @property
    def readonly(self) -> bool:
        return self.session.readonly

    def action_show_view(self, view_id: str) -> None:
        # The tabs live on the base screen; the help screen may be on top while its keys still work.
        base = self.screen_stack[0]
        tabs = base.query_one("#views", ViewTabs)
        if tabs.active == f"view-{view_id}":
            return
        if base.focused is not None and tabs in base.focused.ancestors:
            # Let go of the focus first: hiding a focused widget makes Textual focus a neighbour in the same
            # (now hidden) pane, where keys would go unseen.
            base.set_focus(None)
        tabs.active = f"view-{view_id}"

    async def on_view_tabs_activated(self, event: ViewTabs.Activated) -> None:
        pane = event.pane
        await self._built_in(pane)
        if self.latest:  # views skip updates while hidden; bring the one now shown up to date
            self.samples_applied.publish(self.latest)
        if self.screen is self.screen_stack[0]:  # not while help or a dialog is on top
            self.call_after_refresh(self.focus_view, pane)

    async def _built_in(self, pane: Widget) -> None:
        """The pane's view, built into it the first time (a pane is mounted empty when first shown)."""
        spec = next((v for v in self.views if v.pane_id == pane.id), None)
        if spec is not None and not pane.children:
            await pane.mount(self.build_view(spec))

    def build_view(self, spec: ViewSpec) -> Widget:
        """The view's widget. Views other than the dashboard (whose rules are in app.tcss) bring views.tcss in
        with the first of them: its rules are for their own widgets, all mounted after it is read."""
        if spec.id != "dashboard":
            stylesheets.ensure(self, VIEWS_CSS)
        return spec.build(self)

    def focus_view(self, pane: Widget) -> None:
        """Focus follows the tab: the view's main widget gets it, so the view's own keys (x, R, ...) work at
        once, not only after Tab has moved the focus off the tab bar."""
        tabs = self.screen_stack[0].query_one("#views", ViewTabs)
        view = pane.children[0] if pane.children else None
        if view is None or tabs.active != pane.id:  # the user switched on meanwhile: focusing a hidden view
            return  # would switch the tabs back to it
        focus_main = getattr(view, "focus_main", None)
        if callable(focus_main):
            focus_main()
            return
        from textual.widgets import DataTable  # the other views' tables; the first screen has none (5 ms import)

        tables = view.query(DataTable)
        target: Widget | None = next((t for t in tables if t.display and t.can_focus), None)
        if target is None:
            target = next((w for w in view.query("*") if w.focusable), None)
        if target is not None:
            target.focus()

    def view(self, view_id: str) -> Widget | None:
        """The view's widget, if it has been built."""
        pane = self.screen_stack[0].query_one("#views", ViewTabs).get_pane(f"view-{view_id}")
        return pane.children[0] if pane.children else None

    async def run_view_action(self, view_id: str, action: str) -> None:
        """Show a view and run one of its actions (the command palette's way to a view's keys)."""
        self.action_show_view(view_id)
        tabs = self.screen_stack[0].query_one("#views", ViewTabs)
        pane = tabs.get_pane(f"view-{view_id}")
        await self._built_in(pane)
        await pane.children[0].run_action(action)


def create_app(
    machine: Machine, config: dict[str, Any] | None = None, *, readonly: bool = False, **kwargs: Any
) -> GpudashApp:
    """The app for a machine; tests pass fakes (machine, add_torch_view) through here."""
    return GpudashApp(Session(config or defaults(), machine=machine, readonly=readonly), **kwargs)


def run_app(session: Session) -> int:
    machine = session.machine(include_torch=False)  # torch comes later, in the background
    # An error once the terminal has gone (a write to it that failed before the terminal watch noticed, then the
    # traceback Textual prints there) is the terminal going away, as a SIGHUP would say, not a fault of ours.
    terminal = terminal_watch.stdin_terminal()
    try:
        app = GpudashApp(session)
        with lifetime.graceful(app.exit):  # SIGTERM/SIGHUP end the app normally (terminal restored)
            app.run()
    except OSError:
        if terminal is None or not terminal_watch.hung_up(terminal):
            raise
        return lifetime.exit_code(terminal_watch.EXIT_TERMINAL_GONE)
    finally:
        machine.close()
    code = lifetime.exit_code(app.return_code or 0)
    if code == 1 and terminal is not None and terminal_watch.hung_up(terminal):
        return terminal_watch.EXIT_TERMINAL_GONE
    return code
