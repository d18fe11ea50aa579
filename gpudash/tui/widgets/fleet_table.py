"""The Fleet view's table: a line per host and device, the host and its status on its first line.

A fleet of 128 hosts x 8 GPUs is over a thousand lines, most of whose readings change every round. In
Textual's DataTable every update_cell is a full refresh and any change re-renders every visible cell through
Rich: about 150 ms of the UI thread per round of that fleet here (docs/performance.md, "Fleet view CPU"). As
a LiveTable, a round builds one Text per line whose words changed, and only lines on screen are rendered.
Cells are plain Text, never markup: host names, model names and errors are other machines' words.
Where some host's versions differ from the fleet's (gpudash.fleet.drift), a drift column after the health one
names the facts on which each host is odd ("≠driver,≠torch", as `gpudash fleet` marks them): left of the name
column, which gives way first, so the marks stay whole on an 80-column screen.
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
DRIFT_AFTER = HEADER.index("health") + 1  # where the drift column goes, when some host is odd
DRIFT_HEADER = (*HEADER[:DRIFT_AFTER], "drift", *HEADER[DRIFT_AFTER:])
STATUS = HEADER.index("status")  # before the drift column: the same in both headers
NAME_MIN = 8  # the name (or error) column gives way to the others down to this; the line scrolls past it

Words = tuple[str, ...]
Sizes = tuple[int, ...]  # each word's width on screen
Line = tuple[Words, Sizes, str]  # a line's words, their widths and its host's status: compared, drawn when shown


def sizes_of(words: Words) -> Sizes:
    return tuple(map(len, words)) if "".join(words).isascii() else tuple(map(cell_len, words))


def drift_word(facts: list[str]) -> str:
    return ",".join(f"≠{fact}" for fact in facts)


class FleetTable(LiveTable):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.host_of: dict[str, str] = {}  # row key -> host name
        self._column_widths: tuple[int, ...] = ()
        self._texts: dict[Line, list[Text]] = {}  # the cells of lines drawn at these widths
        self._hosts: Sequence[Host] = ()
        self.odd: dict[str, list[str]] = {}  # host -> the facts it is odd on (gpudash.fleet.drift.odd_facts)
        self._header: tuple[str, ...] = tuple(HEADER)

    def on_resize(self) -> None:
        if self._hosts:
            self.show_hosts(self._hosts)  # the name column takes what the new width leaves

    def show_hosts(self, hosts: Sequence[Host]) -> None:
        self._hosts = hosts
        rows: list[tuple[str, Line]] = []
        host_of: dict[str, str] = {}
        odd = self.odd
        self._header = DRIFT_HEADER if odd else tuple(HEADER)
        for host in hosts:
            first_words = [host.name, status_word(host), health_word(host)]
            if odd:
                first_words.append(drift_word(odd.get(host.name, [])))
            blank = [""] * len(first_words)
            for i, (device_id, cells) in enumerate(host_rows(host)):
                key = f"{host.name}\t{device_id}"
                host_of[key] = host.name
                words = (*(first_words if i == 0 else blank), *cells)
                rows.append((key, (words, sizes_of(words), host.status)))
        self.host_of = host_of
        self._column_widths = widths = self._fit_widths(rows)
        self._texts = {}  # lines drawn before are kept as strips (LiveTable) while their words and widths stay
        header = line_text(self._header, sizes_of(self._header), "", widths, self._header)
        header.stylize("bold")
        self.show([LiveColumn("line", header, sum(w + 1 for w in widths))], rows)

    def cells_from(self, row: Line) -> list[Text]:
        texts = self._texts.get(row)
        if texts is None:
            texts = self._texts[row] = [line_text(*row, self._column_widths, self._header)]
        return texts

    def _fit_widths(self, rows: list[tuple[str, Line]]) -> tuple[int, ...]:
        """Each column as wide as its widest cell; the name column takes what the screen has left."""
        name = self._header.index("name")
        widths = list(map(max, zip(sizes_of(self._header), *(line[1] for _, line in rows))))
        room = (self.size.width or self.app.size.width) - sum(w + 1 for j, w in enumerate(widths) if j != name) - 2
        widths[name] = max(min(widths[name], room), min(widths[name], NAME_MIN))
        return tuple(widths)


def line_text(
    words: Words, sizes: Sizes, status: str, widths: tuple[int, ...], header: Sequence[str] = tuple(HEADER)
) -> Text:
    """One line: each word in its column (numbers to the right, a word too long cut with "…")."""
    parts = []
    for column, word, n, width in zip(header, words, sizes, widths):
        if n > width:
            word, n = set_cell_size(word, width - 1) + "…", width
        parts.append(" " + (" " * (width - n) + word if column in RIGHT else word + " " * (width - n)))
    line = Text("".join(parts), end="")
    style = STATUS_STYLE.get(status)
    if style and words[STATUS]:
        start = sum(len(p) for p in parts[:STATUS]) + 1  # in characters, as Text's spans count
        line.stylize(style, start, start + len(parts[STATUS].strip()))
    return line
