"""The views' tabs: a tab bar of one widget and a pane a view, mounted when the view is first shown.

Textual's TabbedContent builds a tab bar of twelve widgets (the bar, a scroll container, two boxes, a Tab a view
and the underline) and a pane for every view up front, each styled and laid out before the first frame; with
the title row's four (title_bar.py), about 20 ms of it on a 2-core VM (docs/performance.md, "fifth pass"). Here
the bar draws the labels and the underline itself, with Textual's look (the same colours, the same bar
characters).

The tabs follow the keys (`active = ...`) and clicks, never the focus: Textual's panes switch the tabs to a pane
that gets the focus, and learn of that focus several messages late, so a key pressed meanwhile was undone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.widget import Widget


class TabBar(Widget, can_focus=True):
    """The tab labels on the first row and, when the bar is two rows high, the underline on the second."""

    DEFAULT_CSS = """
    TabBar {
        width: 100%;
        height: 2;
        pointer: pointer;
        & > .tab-bar--label { color: $foreground 50%; }
        & > .tab-bar--hover { color: $foreground; }
        & > .tab-bar--active { color: $foreground; }
        & > .tab-bar--underline { color: $block-cursor-background; background: $foreground 10%; }
        &:focus {
            & > .tab-bar--active {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
            & > .tab-bar--underline { background: $foreground 30%; }
        }
        &:ansi {
            & > .tab-bar--label { text-style: dim; }
            & > .tab-bar--active { text-style: not dim bold; }
            & > .tab-bar--underline { color: $block-cursor-background; background: $border-blurred; }
        }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tab-bar--label",
        "tab-bar--hover",
        "tab-bar--active",
        "tab-bar--underline",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous tab", show=False),
        Binding("right", "step(1)", "Next tab", show=False),
    ]

    active: reactive[str] = reactive("")
    hovered: reactive[str] = reactive("")

    class Clicked(Message):
        """A label was clicked, or the focused bar was stepped with left/right."""

        def __init__(self, pane_id: str) -> None:
            self.pane_id = pane_id
            super().__init__()

    def __init__(self, labels: Sequence[tuple[str, str]], active: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.labels = list(labels)  # (pane id, title), in the order shown
        self.set_reactive(TabBar.active, active)

    def spans(self) -> list[tuple[str, int, int]]:
        """Each label's pane id and its columns [start, end): one cell of padding either side of the title."""
        out, x = [], 0
        for pane_id, title in self.labels:
            width = len(title) + 2
            out.append((pane_id, x, x + width))
            x += width
        return out

    def shift(self) -> int:
        """Columns the labels are scrolled left by: none while they fit, else so that the active one ends at the
        bar's right edge (a terminal narrower than every label still shows which view is shown)."""
        spans = self.spans()
        width = self.size.width
        if not spans or not width or spans[-1][2] <= width:
            return 0
        end = next((b for pane_id, _, b in spans if pane_id == self.active), 0)
        return max(0, end - width)

    def render(self) -> RenderableType:
        label, hover, active = (
            self.get_component_rich_style(name) for name in ("tab-bar--label", "tab-bar--hover", "tab-bar--active")
        )
        row = Text(no_wrap=True, overflow="crop")
        for pane_id, title in self.labels:
            style = active if pane_id == self.active else hover if pane_id == self.hovered else label
            padding = Style(color=style.color, bgcolor=style.bgcolor)  # the colours, not an underline
            row.append(" ", padding).append(title, style).append(" ", padding)
        shift = self.shift()
        if shift:
            row = row[shift:]
        if self.size.height < 2:  # a short terminal: the bar is one row (app.tcss), the underline goes
            return row
        bar = self.get_component_rich_style("tab-bar--underline")
        start, end = next(((a, b) for pane_id, a, b in self.spans() if pane_id == self.active), (0, 0))
        underline = Bar(
            highlight_range=(start - shift, end - shift),
            highlight_style=Style.from_color(bar.color),
            background_style=Style.from_color(bar.bgcolor),
        )
        return Group(row, underline)

    def _pane_at(self, x: int) -> str | None:
        x += self.shift()
        return next((pane_id for pane_id, a, b in self.spans() if a <= x < b), None)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = self._pane_at(event.x) or ""

    def on_leave(self, event: events.Leave) -> None:
        self.hovered = ""

    def on_click(self, event: events.Click) -> None:
        event.stop()
        pane_id = self._pane_at(event.x)
        if pane_id is not None:
            self.post_message(self.Clicked(pane_id))

    def action_step(self, step: int) -> None:
        ids = [pane_id for pane_id, _ in self.labels]
        if self.active in ids:
            self.post_message(self.Clicked(ids[(ids.index(self.active) + step) % len(ids)]))


class ViewPane(Container):
    """One view's pane; the app mounts the view into it when it is first shown."""

    DEFAULT_CSS = "ViewPane { height: 1fr; padding: 0; }"


class ViewTabs(Vertical):
    """The tab bar over the shown view. `active` is the shown pane's id; setting it shows that pane, mounting
    it the first time, and posts Activated (the app builds the view into an empty pane then). The panes are its
    own children, one shown at a time: a ContentSwitcher between was one more full-height container to style,
    lay out and draw on the first frame."""

    DEFAULT_CSS = "ViewTabs { height: 1fr; }"

    class Activated(Message):
        """A pane was shown, by a key, a click or the code."""

        def __init__(self, tabs: ViewTabs, pane: ViewPane) -> None:
            self.tabs, self.pane = tabs, pane
            super().__init__()

        @property
        def control(self) -> ViewTabs:
            return self.tabs

    def __init__(self, labels: Sequence[tuple[str, str]], first: Widget, *, id: str | None = None) -> None:
        """`labels`: (pane id, title) of every view; `first`: the first view's widget, shown from the start."""
        super().__init__(id=id)
        self.labels = list(labels)
        self._first = first
        self._panes: dict[str, ViewPane] = {}
        self._active = self.labels[0][0]

    def compose(self) -> ComposeResult:
        yield TabBar(self.labels, self._active)
        pane = self._panes[self._active] = ViewPane(self._first, id=self._active)
        yield pane

    @property
    def active(self) -> str:
        return self._active

    @active.setter
    def active(self, pane_id: str) -> None:
        if pane_id == self._active:
            return
        pane = self.get_pane(pane_id)
        shown = self.get_pane(self._active)
        with self.app.batch_update():
            if pane.parent is None:  # its first showing: mounted hidden, then shown
                pane.display = False
                self.mount(pane)
            shown.display, pane.display = False, True
        self._active = pane_id
        self.query_one(TabBar).active = pane_id
        self.post_message(self.Activated(self, pane))

    def get_pane(self, pane_id: str) -> ViewPane:
        """The pane with this id (created, not yet mounted, if it was never shown); KeyError for no such view."""
        if pane_id not in self._panes:
            if pane_id not in (p for p, _ in self.labels):
                raise KeyError(pane_id)
            self._panes[pane_id] = ViewPane(id=pane_id)
        return self._panes[pane_id]

    def on_tab_bar_clicked(self, message: TabBar.Clicked) -> None:
        message.stop()
        self.active = message.pane_id
