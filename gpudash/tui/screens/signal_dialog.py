"""The confirmation before processes are signalled: which processes (pid, user, command, GPU, age), which
signal, and two buttons. One process, or every tagged one in one confirmation (those that may not be
signalled are listed as skipped, with why). Cancel has the focus, so a stray enter sends nothing; `y`
confirms, `n` or escape cancels."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpudash.actions.processes import ProcessTarget
from gpudash.render import monitor
from gpudash.render.formatting import NA
from gpudash.tui import stylesheets
from gpudash.tui.stylesheets import DIALOGS_CSS

WHAT_IT_DOES = {
    "SIGINT": "interrupts it, as ctrl+c would (a training script may save and stop)",
    "SIGTERM": "asks it to exit (it may clean up first)",
    "SIGKILL": "ends it at once (no clean-up; unsaved work is lost)",
}
MAX_LISTED = 8  # tagged processes named one per line; the rest are counted


class SignalDialog(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Send", show=False),
        Binding("n,escape", "answer(False)", "Cancel", show=False),
    ]

    def __init__(
        self,
        targets: Sequence[ProcessTarget],
        signal_name: str,
        gpus: Mapping[int, str],
        ages: Mapping[int, float | None],
        *,
        skipped: Sequence[ProcessTarget] = (),
    ) -> None:
        super().__init__()
        stylesheets.ensure(self.app, DIALOGS_CSS)  # before Textual styles this screen as it is pushed
        self.targets = list(targets)
        self.target = self.targets[0]
        self.signal_name = signal_name
        self.gpus = gpus
        self.skipped = list(skipped)
        # The age of each process identified now (the pid's start time), else what the driver's listing said.
        self.ages = {
            t.pid: max(0.0, time.time() - t.create_time) if t.create_time else ages.get(t.pid) for t in self.targets
        }

    def compose(self) -> ComposeResult:
        name = self.signal_name
        with Vertical(id="signal-box") as box:
            box.border_title = f"send {name}?"
            if len(self.targets) == 1:
                t = self.target
                yield Static(
                    Text.assemble(
                        (f"Send {name} to pid {t.pid}", "bold"),
                        f" ({t.name or NA}, user {t.user or NA}) on GPU {self.gpus.get(t.pid, '?')}?",
                    ),
                    id="signal-question",
                )
                yield Static(Text(f"command: {t.command or NA}"), id="signal-command")
                age = f"running for {monitor.elapsed(self.ages.get(t.pid))} · "
            else:
                yield Static(
                    Text(f"Send {name} to {len(self.targets)} tagged processes?", "bold"), id="signal-question"
                )
                lines = [
                    f"pid {t.pid} ({t.name or NA}, user {t.user or NA}) on GPU {self.gpus.get(t.pid, '?')}, "
                    f"running {monitor.elapsed(self.ages.get(t.pid))}: {t.command or NA}"
                    for t in self.targets[:MAX_LISTED]
                ]
                if len(self.targets) > MAX_LISTED:
                    lines.append(f"… and {len(self.targets) - MAX_LISTED} more")
                yield Static(Text("\n".join(lines)), id="signal-command")
                age = ""
            if self.skipped:
                why = "; ".join(str(t.why_not) for t in self.skipped)
                yield Static(Text(f"skipped: {why}", style="dim"), id="signal-skipped")
            yield Static(Text(age + WHAT_IT_DOES.get(name, ""), style="dim"), id="signal-note")
            with Horizontal(id="signal-buttons"):
                yield Button(f"Send {name} (y)", id="signal-send", variant="error")
                yield Button("Cancel (n)", id="signal-cancel", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#signal-cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "signal-send")

    def action_answer(self, send: bool) -> None:
        self.dismiss(send)
