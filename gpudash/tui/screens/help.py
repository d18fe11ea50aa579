"""The `?` screen: every key binding, what the badges and "n/a" mean, and where the data comes from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gpudash.tui.widgets.precision_badges import BadgeLegend

if TYPE_CHECKING:
    from gpudash.tui.views import ViewSpec


def binding_rows(bindings: Iterable[BindingType], views: Iterable[ViewSpec]) -> list[tuple[str, str]]:
    """(key, what it does) for the app's bindings, then one row per registered view."""
    rows = [
        (b.key_display or b.key, b.tooltip or b.description)
        for b in bindings
        if isinstance(b, Binding) and b.show and not b.action.startswith("show_view")
    ]
    rows += [(v.key, f"{v.title}: {v.description}" if v.description else v.title) for v in views]
    rows.append(("esc", "close this help"))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close", show=False),
        Binding("q", "dismiss", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        app = self.app
        with VerticalScroll(id="help") as help_box:
            help_box.border_title = "gpudash help"
            yield Static("Keys", classes="help-heading", id="help-keys")
            with Grid(id="help-bindings"):
                for key, text in binding_rows(app.BINDINGS, getattr(app, "views", [])):
                    yield Static(key, classes="help-key", markup=False)
                    yield Static(text, markup=False)
            yield Static("Precision badges", classes="help-heading")
            yield BadgeLegend()
            yield Static(
                "From the architecture tables (the spec), not measured here. fp8 shows the better of "
                "e4m3 and e5m2; hover a badge row for both.",
                classes="help-text",
            )
            yield Static("n/a", classes="help-heading")
            yield Static(
                "A reading the driver or sensor could not give. The reason is in the dim line at the "
                "bottom of each card, and in the tooltip of the gauge or readings it belongs to.",
                classes="help-text",
            )
            yield Static("Data source", classes="help-heading")
            machine = getattr(app, "machine", None)
            yield Static(machine.label if machine else "", classes="help-text", markup=False)
            yield Static("esc, ? or q closes", classes="help-footer")

    def on_click(self) -> None:
        self.dismiss()
