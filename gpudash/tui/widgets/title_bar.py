"""The dashboard's title row as one widget, where Textual's Header mounts four (itself, the icon, the title and
the clock's space), each styled and laid out before the first frame. The same look: the icon on the left
(a click opens the command palette), "title — subtitle" centred."""

from __future__ import annotations

from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widget import Widget

ICON_WIDTH = 8  # Textual's HeaderIcon: 8 columns, the icon after one of padding
RIGHT_WIDTH = 10  # and the clock's space on the right, kept so the title stays where Header centred it


class TitleBar(Widget):
    DEFAULT_CSS = """
    TitleBar {
        dock: top;
        width: 100%;
        height: 1;
        background: $panel;
        color: $foreground;
        & > .title-bar--icon-hover { background: $foreground 10%; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"title-bar--icon-hover"}

    over_icon: reactive[bool] = reactive(False)

    def __init__(self, icon: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.icon = icon

    def on_mount(self) -> None:
        self.watch(self.app, "title", self._retitle, init=False)
        self.watch(self.app, "sub_title", self._retitle, init=False)

    def _retitle(self) -> None:
        self.refresh()

    def render(self) -> RenderableType:
        width = self.size.width
        icon = Text(f" {self.icon}".ljust(ICON_WIDTH)[:ICON_WIDTH])
        if self.over_icon:
            icon.stylize(self.get_component_rich_style("title-bar--icon-hover"))
        title = Text(self.app.title)
        if self.app.sub_title:  # as App.format_title: "title — subtitle", the subtitle dim
            title.append(" — ", "dim").append(self.app.sub_title, "dim")
        middle = max(0, width - ICON_WIDTH - RIGHT_WIDTH)
        title.truncate(middle, overflow="ellipsis")
        pad = middle - title.cell_len
        line = Text.assemble(icon, " " * (pad // 2), title, " " * (pad - pad // 2), " " * RIGHT_WIDTH, no_wrap=True)
        line.truncate(width)
        return line

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.over_icon = event.x < ICON_WIDTH and self.app.ENABLE_COMMAND_PALETTE

    def on_leave(self, event: events.Leave) -> None:
        self.over_icon = False

    async def on_click(self, event: events.Click) -> None:
        if event.x < ICON_WIDTH and self.app.ENABLE_COMMAND_PALETTE:
            event.stop()
            await self.run_action("app.command_palette")
