"""The Fleet view's table: a line per host and device, the host and its status on its first line.

A fleet of 128 hosts x 8 GPUs is over a thousand lines, most of whose readings change every round. In
Textual's DataTable every update_cell is a full refresh and any change re-renders every visible cell through
Rich: about 150 ms of the UI thread per round of that fleet here (docs/performance.md, "Fleet view CPU"). As
a LiveTable, a round builds one Text per line whose words changed, and only lines on screen are rendered.
Cells are plain Text, never markup: host names, model names and errors are other machines' words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from gpudash.fleet.model import Host
from gpudash.render.fleet import HEADER, health_word, host_rows, status_word
from gpudash.tui.widgets.live_table import LiveColumn, LiveTable

STATUS_STYLE = {
    "up": "green",
    "degraded": "bold magenta",
    "empty": "bold yellow",
    "stale": "bold yellow",
    "unreachable": "bold red",
}
RIGHT = frozenset(("util", "memory", "temp", "power"))  # numbers line up on the right
NAME = HEADER.index("name")
STATUS = HEADER.index("status")
NAME_MIN = 8  # the name (or error) column gives way to the others down to this; the line scrolls past it

Words = tuple[str, ...]
Sizes = tuple[int, ...]  # each word's width on screen
Line = tuple[Words, Sizes, str]  # a line's words, their widths and its host's status: compared, drawn when shown


def sizes_of(words: Words) -> Sizes:
    return tuple(map(len, words)) if "".join(words).isascii() else tuple(map(cell_len, words))


HEADER_SIZES = sizes_of(tuple(HEADER))


class FleetTable(LiveTable):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.host_of: dict[str, str] = {}  # row key -> host name
        self._column_widths: tuple[int, ...] = ()
        self._texts: dict[Line, list[Text]] = {}  # the cells of lines drawn at these widths
        self._hosts: Sequence[Host] = ()

    def on_resize(self) -> None:
        if self._hosts:
            self.show_hosts(self._hosts)  # the name column takes what the new width leaves

    def show_hosts(self, hosts: Sequence[Host]) -> None:
        self._hosts = hosts
        rows: list[tuple[str, Line]] = []
        host_of: dict[str, str] = {}
        for host in hosts:
            status, health = status_word(host), health_word(host)
            for i, (device_id, cells) in enumerate(host_rows(host)):
                key = f"{host.name}\t{device_id}"
                host_of[key] = host.name
                first = i == 0
                words = (host.name if first else "", status if first else "", health if first else "", *cells)
                rows.append((key, (words, sizes_of(words), host.status)))
        self.host_of = host_of
        self._column_widths = widths = self._fit_widths(rows)
        self._texts = {}  # lines drawn before are kept as strips (LiveTable) while their words and widths stay
        header = line_text(tuple(HEADER), HEADER_SIZES, "", widths)
        header.stylize("bold")
        self.show([LiveColumn("line", header, sum(w + 1 for w in widths))], rows)

    def cells_from(self, row: Line) -> list[Text]:
        texts = self._texts.get(row)
        if texts is None:
            texts = self._texts[row] = [line_text(*row, self._column_widths)]
        return texts

    def _fit_widths(self, rows: list[tuple[str, Line]]) -> tuple[int, ...]:
        """Each column as wide as its widest cell; the name column takes what the screen has left."""
        widths = list(map(max, zip(HEADER_SIZES, *(line[1] for _, line in rows))))
        room = (self.size.width or self.app.size.width) - sum(w + 1 for j, w in enumerate(widths) if j != NAME) - 2
        widths[NAME] = max(min(widths[NAME], room), min(widths[NAME], NAME_MIN))
        return tuple(widths)


def line_text(words: Words, sizes: Sizes, status: str, widths: tuple[int, ...]) -> Text:
    """One line: each word in its column (numbers to the right, a word too long cut with "…")."""
    parts = []
    for header, word, n, width in zip(HEADER, words, sizes, widths):
        if n > width:
            word, n = set_cell_size(word, width - 1) + "…", width
        parts.append(" " + (" " * (width - n) + word if header in RIGHT else word + " " * (width - n)))
    line = Text("".join(parts), end="")
    style = STATUS_STYLE.get(status)
    if style and words[STATUS]:
        start = sum(len(p) for p in parts[:STATUS]) + 1  # in characters, as Text's spans count
        line.stylize(style, start, start + len(parts[STATUS].strip()))
    return line
