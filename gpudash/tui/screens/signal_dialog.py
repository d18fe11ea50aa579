"""The confirmation before a process is signalled: which process (pid, user, command, GPU, age), which
signal, and two buttons. Cancel has the focus, so a stray enter sends nothing; `y` confirms, `n` or escape
cancels."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpudash.actions.processes import ProcessTarget
from gpudash.render import monitor
from gpudash.render.formatting import NA


class SignalDialog(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Send", show=False),
        Binding("n,escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(self, target: ProcessTarget, signal_name: str, gpu: str, elapsed_s: float | None) -> None:
        super().__init__()
        self.target = target
        self.signal_name = signal_name
        self.gpu = gpu
        # The age of the process identified now (the pid's start time), else what the driver's listing said.
        self.elapsed_s = max(0.0, time.time() - target.create_time) if target.create_time else elapsed_s

    def compose(self) -> ComposeResult:
        t = self.target
        with Vertical(id="signal-box") as box:
            box.border_title = f"send {self.signal_name}?"
            yield Static(
                Text.assemble(
                    (f"Send {self.signal_name} to pid {t.pid}", "bold"),
                    f" ({t.name or NA}, user {t.user or NA}) on GPU {self.gpu}?",
                ),
                id="signal-question",
            )
            yield Static(Text(f"command: {t.command or NA}"), id="signal-command")
            yield Static(
                Text(
                    f"running for {monitor.elapsed(self.elapsed_s)} · "
                    + (
                        "asks it to exit (it may clean up first)"
                        if self.signal_name == "SIGTERM"
                        else "ends it at once (no clean-up; unsaved work is lost)"
                    ),
                    style="dim",
                ),
                id="signal-note",
            )
            with Horizontal(id="signal-buttons"):
                yield Button(f"Send {self.signal_name} (y)", id="signal-send", variant="error")
                yield Button("Cancel (n)", id="signal-cancel", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#signal-cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "signal-send")

    def action_answer(self, send: bool) -> None:
        self.dismiss(send)
