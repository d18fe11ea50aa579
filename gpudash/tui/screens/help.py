"""The `?` screen: every key binding, what the badges and "n/a" mean, and where the data comes from."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gpudash.tui import stylesheets
from gpudash.tui.stylesheets import DIALOGS_CSS
from gpudash.tui.widgets.precision_badges import BadgeLegend

if TYPE_CHECKING:
    from gpudash.tui.views import ViewSpec


GENERAL_KEYS = [
    ("tab", "move the focus to the next table, button or field (shift+tab: back)"),
    ("ctrl+p", "command palette: every view and action below, searchable by name"),
    ("↑ ↓ pgup pgdn", "move in a table; home/end: first/last row"),
    ("esc", "close this help; in a view: cancel, go back or clear the filter"),
]
# Keys a view's widgets handle themselves (not bindings of the view), listed with the view.
WIDGET_KEYS = {
    "dashboard": [
        ("enter", "on a device row: its detail (card, history chart, every field with the reason for n/a)"),
        (
            "enter",
            "on a process row: its screen (command, cwd, user, threads, CPU, memory per GPU, environment, tree)",
        ),
        ("← →", "in the process list: scroll long commands sideways (COMMAND +N says how far)"),
        ("← →  [ ]", "in the detail: the previous or next device"),
        ("click", "on a process column header: sort by it (again: reverse)"),
    ],
}


def _key(binding: Binding) -> str:
    return binding.key_display or binding.key.replace("slash", "/").replace("question_mark", "?")


def binding_rows(bindings: Iterable[BindingType], views: Iterable[ViewSpec]) -> list[tuple[str, str]]:
    """(key, what it does) for the app's own bindings, one row per registered view, and the general keys."""
    rows = [
        (_key(b), b.tooltip or b.description)
        for b in bindings
        if isinstance(b, Binding) and b.show and not b.action.startswith("show_view")
    ]
    rows += [(v.key, f"{v.title}: {v.description}" if v.description else v.title) for v in views]
    rows += GENERAL_KEYS
    return rows


def view_rows(spec: ViewSpec) -> list[tuple[str, str]]:
    """The keys of one view: its bindings (and its widgets' keys); the view's class is imported for them,
    which the help screen may do (the view itself is still built only when first shown)."""
    factory = spec.factory
    if isinstance(factory, str):
        module, _, name = factory.partition(":")
        try:
            factory = getattr(importlib.import_module(module), name)
        except Exception:  # a broken view module must not break the help screen
            return []
    rows = [(_key(b), b.tooltip or b.description) for b in getattr(factory, "BINDINGS", []) if isinstance(b, Binding)]
    return rows + WIDGET_KEYS.get(spec.id, [])


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        stylesheets.ensure(self.app, DIALOGS_CSS)  # before Textual styles this screen as it is pushed

    def compose(self) -> ComposeResult:
        app = self.app
        with VerticalScroll(id="help") as help_box:
            help_box.border_title = "gpudash help"
            yield Static("Keys everywhere", classes="help-heading", id="help-keys")
            with Grid(classes="help-bindings"):
                for key, text in binding_rows(app.BINDINGS, getattr(app, "views", [])):
                    yield Static(key, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            for spec in getattr(app, "views", []):
                rows = view_rows(spec)
                if not rows:
                    continue
                yield Static(f"{spec.title} ({spec.key})", classes="help-heading")
                with Grid(classes="help-bindings"):
                    for key, text in rows:
                        yield Static(key, classes="help-key", markup=False)
                        yield Static(text, markup=False)
            yield Static("Precision badges", classes="help-heading")
            yield BadgeLegend()
            yield Static(
                "From the architecture tables (the spec), not measured here. fp8 shows the better of "
                "e4m3 and e5m2; hover a badge row for both.",
                classes="help-text",
            )
            yield Static("Dashboard columns", classes="help-heading")
            yield Static(
                "PREC: the narrowest float format the device runs natively by the spec tables (fp8, bf16, "
                "fp16, ...). PERF: the P-state (P0 fastest). HEALTH: the worst of the GPU's driver-counter "
                "health checks (OK, WARN, CRIT, UNKN), read every [health] read_interval_s; enter shows each "
                "finding with its action. GPU 7:1 is MIG device 1 of GPU 7, an indented "
                "row under its GPU. Processes: TYPE C compute, G graphics, C+G both; SM% the process's share "
                "of the SMs where the driver gives it; CPU% of one core; HOST-MEM resident memory; TIME since "
                "it started. JOB (shown when a process has one): its Slurm job (slurm ID.step) or Kubernetes pod "
                "(k8s namespace/pod), from its cgroup, then its environment. A GPU marked ! is allocated but "
                "idle: held by processes at most [idle] utilization_pct busy for [idle] after_s (the note under "
                "the list names it). I, T and K signal the highlighted process, or every tagged one (space "
                "tags, *), after one confirmation: never on a replayed machine (its pids are elsewhere) or "
                "with --readonly, and only processes you may signal (yours, or any as root).",
                classes="help-text",
            )
            yield Static("n/a", classes="help-heading")
            yield Static(
                "A reading the driver or sensor could not give. A device's detail (enter) lists every "
                "field with the reason for each n/a; cards also show it in their dim bottom line.",
                classes="help-text",
            )
            yield Static("Data source", classes="help-heading")
            machine = getattr(app, "machine", None)
            yield Static(machine.label if machine else "", classes="help-text", markup=False)
            yield Static("esc, ? or q closes", classes="help-footer")

    def on_click(self) -> None:
        self.dismiss()
