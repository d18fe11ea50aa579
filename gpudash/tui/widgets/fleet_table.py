"""The Fleet view's table: a line per host and device, the host and its status on its first line.

A fleet of 128 hosts x 8 GPUs is over a thousand lines, most of whose readings change every round. In
Textual's DataTable every update_cell is a full refresh and any change re-renders every visible cell through
Rich: about 150 ms of the UI thread per round of that fleet here (docs/performance.md, "Fleet view CPU"). As
a LiveTable, a round builds one Text per line whose words changed, and only lines on screen are rendered.
The lines' words (`table_rows`) are worked out wherever the round is: the Fleet view does it in the round's
worker thread, so that the UI thread only compares them with what it shows and draws the lines on screen
(9,216 lines at 1,024 hosts x 8 GPUs took 80-140 ms of the UI thread to build: docs/performance.md, "Fleet at
1,024 hosts through Prometheus").
Cells are plain Text, never markup: host names, model names and errors are other machines' words.
Where some host's versions differ from the fleet's (gpudash.fleet.drift), a drift column after the health one
names the facts on which each host is odd ("≠driver,≠torch", as `gpudash fleet` marks them): left of the name
column, which gives way first, so the marks stay whole on an 80-column screen.

When a line is wider than the screen, columns give way in this order (docs/fleet.md, "The Fleet tab on a narrow
terminal"): 1. the host column drops the domain every host shown shares (`node-a017.cluster.example.com` is
shown as `node-a017.…`; the status line names the domain); 2. the GPU models drop the vendor's word as the
dashboard's device rows do (gpudash.render.monitor.short_name: `NVIDIA H100 80GB HBM3` -> `H100 80GB HBM3`), then
the name column (GPU model, or the host's error) gives way down to NAME_MIN; 3. the host column keeps the start and the distinguishing end of each name with a `…` between
(`rack-…a017.…`), down to HOST_MIN, and only as far as every host shown keeps a name of its own. Host names are
never cut at their end, where hosts differ; what still does not fit scrolls sideways.

A host shown without devices (unreachable, or answering with none) has one line whose name column carries the
reason, the host's own name left off its front (`127.0.0.1:9483: connection refused` on host 127.0.0.1:9483 reads
`connection refused`). The reason spans the columns after it, blank on that line, up to the screen's edge; where
it is still longer, it is abbreviated on purpose to a word per cause (`short_reason`: "timeout; before: refused",
"HTTP 404", "bad body", "no devices", ...) with "(Enter: why)", never cut mid-word: Enter shows the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.message import Message

from gpudash.fleet.model import Host
from gpudash.render.fleet import HEADER, health_word, host_rows, status_word
from gpudash.render.monitor import short_name
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
HOST = HEADER.index("host")  # the first column in both headers
NO_DEVICE = "–"  # the device column of a host's one line with its error: its name column is not a model
NAME_MIN = 8  # the name (or error) column gives way to the others down to this; the line scrolls past it
HOST_MIN = 12  # the host column is shortened in its middle down to this, while every host keeps its own name
DOMAIN_MARK = ".…"  # in place of the domain every host shown shares (named in the status line)
MIDDLE_MARK = "…"  # in place of the middle of a name: its start and its distinguishing end stay
_DOMAIN = re.compile(r"(\.[A-Za-z0-9_-]+)*\.[A-Za-z][A-Za-z0-9-]*")  # a DNS domain, ending in a word (no IP)
WHY = " (Enter: why)"  # after a reason abbreviated to its words: Enter shows the whole text
# A word for each cause a reason's clause names: gpudash.fleet.fetch's and .scrape's errors, Prometheus's
# lastError for a target (through the Prometheus API) and gpudash.fleet.verdict's problems. First match wins.
REASON_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), word)
    for pattern, word in (
        (r"connection refused", "refused"),
        (r"no answer within|could not be read within|deadline exceeded|timed? ?out", "timeout"),
        (r"unknown host|no such host|name resolution", "unknown host"),
        (r"\bTLS\b|x509|certificate", "TLS"),
        (r"an HTML page", "HTML page"),
        (r"larger than|size limit", "too large"),
        (r"closed the connection", "closed"),
        (r"cut off|unexpected EOF|connection reset", "cut off"),
        (r"not a Prometheus metrics page|expected a valid|invalid|malformed|parse", "bad body"),
        (r"serves no device series", "no devices"),
        (r"lost GPU", "lost GPU"),
        (r"GPUs? of \d+ expected", "GPUs missing"),
        (r"no answer yet", "no answer yet"),
        (r"not asked", "not asked"),
        (r"last scraped", "stale"),
        (r"up == 0", "down"),
        (r"budget|too many", "over budget"),
    )
)
_HTTP = re.compile(r"\bHTTP (?:status )?(\d{3})\b")

Words = tuple[str, ...]
Sizes = tuple[int, ...]  # each word's width on screen
Line = tuple[Words, Sizes, str]  # a line's words, their widths and its host's status: compared, drawn when shown


def sizes_of(words: Words) -> Sizes:
    return tuple(map(len, words)) if "".join(words).isascii() else tuple(map(cell_len, words))


def drift_word(facts: list[str]) -> str:
    return ",".join(f"≠{fact}" for fact in facts)


def reason_of(host_name: str, why: str) -> str:
    """A host line's reason without the host's own name in front (the host column says it)."""
    own = f"{host_name}: "
    return why[len(own) :] if why.startswith(own) and len(why) > len(own) else why


def short_reason(why: str) -> str:
    """A reason in a word per cause, in the order said ("timeout; before: refused"), each cause once."""
    words: list[str] = []
    for clause in why.split("; "):
        before = clause.startswith("before: ")
        http = _HTTP.search(clause)
        word = f"HTTP {http.group(1)}" if http else next((w for p, w in REASON_WORDS if p.search(clause)), "error")
        word = f"before: {word}" if before else word
        if word not in words:
            words.append(word)
    return "; ".join(words)


def reason_in(why: str, room: int) -> str:
    """The reason as it fits `room` cells: whole, else its words with WHY, else its words (cut if need be)."""
    if cell_len(why) <= room:
        return why
    short = short_reason(why)
    return short + WHY if cell_len(short) + len(WHY) <= room else short


@dataclass(frozen=True)
class TableRows:
    """What the table shows of a set of hosts, worked out away from the UI thread: each line's words, each
    column's widest cell, and the hosts' names (for their abbreviation on a narrow screen)."""

    header: tuple[str, ...]
    rows: list[tuple[str, Line]]
    host_of: dict[str, str]  # row key -> host name
    natural: tuple[int, ...]  # each column's widest cell, the header's included
    names: tuple[str, ...]  # the hosts' names, in order
    short_names: int = 0  # the name column's widest cell with the models' short names (render.monitor.short_name)
    reasons: int = 0  # the widest reason of a host's line without devices (not in `natural`: it spans the line)


def table_rows(hosts: Sequence[Host], odd: dict[str, list[str]], before: dict[str, Line] | None = None) -> TableRows:
    """The lines of these hosts (pure: any thread). A line equal to its row's in `before` (the last round's) is
    given as that same object, so that the UI thread's comparison of it is one identity test."""
    rows: list[tuple[str, Line]] = []
    before = before or {}
    host_of: dict[str, str] = {}
    header = DRIFT_HEADER if odd else tuple(HEADER)
    name, device = header.index("name"), header.index("device")
    shortened: dict[str, int] = {}  # each model's short name's width (a few models in a fleet)
    short_widest = len("name")
    reasons = 0
    measured: list[Sizes] = []  # each line's widths, a reason's left out (it spans the line's blank columns)
    for host in hosts:
        first_words = [host.name, status_word(host), health_word(host)]
        if odd:
            first_words.append(drift_word(odd.get(host.name, [])))
        blank = [""] * len(first_words)
        for i, (device_id, cells) in enumerate(host_rows(host)):
            key = f"{host.name}\t{device_id}"
            host_of[key] = host.name
            words = (*(first_words if i == 0 else blank), *cells)
            if words[device] == NO_DEVICE:
                words = (*words[:name], reason_of(host.name, words[name]), *words[name + 1 :])
            line = (words, sizes_of(words), host.status)
            if words[device] == NO_DEVICE:
                reasons = max(reasons, line[1][name])
                measured.append((*line[1][:name], 0, *line[1][name + 1 :]))
            else:
                measured.append(line[1])
                width = shortened.get(words[name])
                if width is None:
                    width = shortened[words[name]] = cell_len(short_name(words[name]))
                short_widest = max(short_widest, width)
            was = before.get(key)
            rows.append((key, was if was == line else line))
    natural = tuple(map(max, zip(sizes_of(header), *measured)))
    return TableRows(header, rows, host_of, natural, tuple(h.name for h in hosts), short_widest, reasons)


def shared_domain(names: Sequence[str]) -> str:
    """The DNS domain every name ends in with a name of its own before it (".cluster.example.com"), or ""."""
    if not names:
        return ""
    first = names[0]
    dot = first.find(".")
    while dot > 0:
        suffix = first[dot:]
        if _DOMAIN.fullmatch(suffix) and all(n.endswith(suffix) and len(n) > len(suffix) for n in names):
            return suffix
        dot = first.find(".", dot + 1)
    return ""


def middle_cut(name: str, width: int) -> str:
    """The name in `width` cells: its start and its end (where hosts of one cluster differ) with "…" between."""
    if cell_len(name) <= width:
        return name
    head = max(1, (width - 1) // 3)
    tail = width - 1 - head
    return name[:head] + MIDDLE_MARK + name[len(name) - tail :]


@dataclass(frozen=True)
class Abbreviation:
    """How the host column shows names at a width: the shared domain left out, the middles cut."""

    domain: str = ""  # the shared domain shown as DOMAIN_MARK
    width: int = 0  # each name's width without the domain (0: whole)

    def short(self, name: str) -> str:
        if self.domain and name.endswith(self.domain):
            stem = name[: len(name) - len(self.domain)]
            return (middle_cut(stem, self.width) if self.width else stem) + DOMAIN_MARK
        return middle_cut(name, self.width + len(DOMAIN_MARK)) if self.width else name

    def legend(self) -> str:
        if not self.domain and not self.width:
            return ""
        said = [f"{DOMAIN_MARK} = {self.domain}"] if self.domain else []
        if self.width:
            said.append(f"{MIDDLE_MARK} = the middle of a long name")
        return "host names: " + ", ".join(said) + " (Enter: the whole name)"


WHOLE = Abbreviation()


def abbreviate(names: Sequence[str], room: int) -> Abbreviation:
    """The least abbreviation that fits the names into `room` cells (not less than HOST_MIN) and leaves every
    host a name of its own: the shared domain first, then the middles of the names."""
    widest = max(map(cell_len, names), default=0)
    if widest <= room:
        return WHOLE
    domain = shared_domain(names)
    mark = len(DOMAIN_MARK) if domain else 0
    stems = [n[: len(n) - len(domain)] if domain else n for n in names]
    widest_stem = max(map(cell_len, stems), default=0)
    if widest_stem + mark <= room:
        return Abbreviation(domain)
    distinct = len(set(names))
    for width in range(max(room, HOST_MIN) - mark, widest_stem):
        if width >= 3 and len({middle_cut(s, width) for s in stems}) == distinct:
            return Abbreviation(domain, width)
    return Abbreviation(domain)


class FleetTable(LiveTable):
    class LegendChanged(Message):
        """The host column's abbreviation changed (a resize): the status line names it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.host_of: dict[str, str] = {}  # row key -> host name
        self._column_widths: tuple[int, ...] = ()
        self._texts: dict[Line, list[Text]] = {}  # the cells of lines drawn at these widths
        self._shown: TableRows | None = None
        self.odd: dict[str, list[str]] = {}  # host -> the facts it is odd on (gpudash.fleet.drift.odd_facts)
        self._header: tuple[str, ...] = tuple(HEADER)
        self.abbreviation = WHOLE
        self.short_names = False  # the models' short names in the name column (a narrow screen)
        self._abbreviations: dict[tuple[tuple[str, ...], int], tuple[Abbreviation, int]] = {}
        self.reason_room = 0  # the cells a host's reason may take on its line (from the name column on)

    @property
    def legend(self) -> str:
        """What the host column's marks stand for, or "" when it shows whole names."""
        return self.abbreviation.legend()

    def on_resize(self) -> None:
        if self._shown is not None:
            was = self.abbreviation
            self.show_rows(self._shown)  # the name and host columns take what the new width leaves
            if self.abbreviation != was:
                self.post_message(self.LegendChanged())

    def show_hosts(self, hosts: Sequence[Host]) -> None:
        self.show_rows(table_rows(hosts, self.odd))

    def show_rows(self, shown: TableRows) -> None:
        """Lines worked out by `table_rows` (on any thread); only those on screen are drawn."""
        self._shown = shown
        self.host_of = shown.host_of
        self._header = shown.header
        was, was_room = (self.abbreviation, self.short_names), self.reason_room
        self._column_widths = widths = self._fit_widths(shown)
        width = sum(w + 1 for w in widths)
        start = sum(w + 1 for w in widths[: self._header.index("name")])  # where the name column begins
        room = self.reason_room = self._reason_room(shown, widths, start)
        self._texts = {}  # lines drawn before are kept as strips (LiveTable) while their words and widths stay
        header = line_text(self._header, sizes_of(self._header), "", widths, self._header)
        header.stylize("bold")
        self.show([LiveColumn("line", header, max(width, start + 1 + room))], shown.rows)
        if (self.abbreviation, self.short_names, room) != (*was, was_room):  # the same words drawn differently
            self._changed_all()

    def _reason_room(self, shown: TableRows, widths: tuple[int, ...], start: int) -> int:
        """A reason's cells: from the name column (at `start`) to the line's end, or further to the widest
        reason, but not past the screen's edge (the width fitting leaves 2 cells), nor narrower than the name
        column."""
        name = self._header.index("name")
        screen = self.size.width or self.app.size.width
        line = sum(w + 1 for w in widths) - start - 1
        return max(widths[name], min(screen - 2 - start - 1, max(line, shown.reasons)))

    def cells_from(self, row: Line) -> list[Text]:
        texts = self._texts.get(row)
        if texts is None:
            words, sizes, status = row
            short = self.abbreviation
            if short is not WHOLE and words[HOST]:
                name = short.short(words[HOST])
                words, sizes = (name, *words[1:]), (cell_len(name), *sizes[1:])
            column = self._header.index("name")
            room = 0
            if words[column - 1] == NO_DEVICE:  # "device" comes just before "name": a reason, not a model
                room = self.reason_room
                why = reason_in(words[column], room)
                if why is not words[column]:
                    words = (*words[:column], why, *words[column + 1 :])
                    sizes = (*sizes[:column], cell_len(why), *sizes[column + 1 :])
            elif self.short_names:
                model = short_name(words[column])
                words = (*words[:column], model, *words[column + 1 :])
                sizes = (*sizes[:column], cell_len(model), *sizes[column + 1 :])
            texts = self._texts[row] = [line_text(words, sizes, status, self._column_widths, self._header, room)]
        return texts

    def _fit_widths(self, shown: TableRows) -> tuple[int, ...]:
        """Each column as wide as its widest cell; where the line is wider than the screen, the host column
        drops the shared domain, the models drop the vendor's word, the name column gives way, then the host
        column is cut in the middle."""
        name = self._header.index("name")
        widths = list(shown.natural)
        screen = self.size.width or self.app.size.width
        self.abbreviation = WHOLE
        self.short_names = False
        if sum(w + 1 for w in widths) + 2 <= screen or not shown.names:
            return tuple(widths)
        key = (shown.names, 0)
        found = self._abbreviations.get(key)
        if found is None:  # the domain only: the same for every screen narrower than the line
            domain = shared_domain(shown.names)
            found = self._remember(key, shown, Abbreviation(domain) if len(domain) > len(DOMAIN_MARK) else WHOLE)
        self._set_host(widths, found)
        room = screen - sum(w + 1 for j, w in enumerate(widths) if j != name) - 2
        if room < widths[name]:  # the models first lose the vendor's word, as the dashboard's device rows do
            self.short_names = True
            widths[name] = min(widths[name], shown.short_names or widths[name])
        widths[name] = max(min(widths[name], room), min(widths[name], NAME_MIN))
        room = screen - sum(w + 1 for j, w in enumerate(widths) if j != HOST) - 2
        if room < widths[HOST]:
            key = (shown.names, max(room, HOST_MIN))
            found = self._abbreviations.get(key) or self._remember(key, shown, abbreviate(shown.names, key[1]))
            self._set_host(widths, found)
        return tuple(widths)

    def _remember(self, key: Any, shown: TableRows, short: Abbreviation) -> tuple[Abbreviation, int]:
        """An abbreviation of these names and the widest name it gives, kept while the names stay."""
        if len(self._abbreviations) > 8:
            self._abbreviations.clear()
        found = self._abbreviations[key] = (short, max(cell_len(short.short(n)) for n in shown.names))
        return found

    def _set_host(self, widths: list[int], found: tuple[Abbreviation, int]) -> None:
        self.abbreviation, widest = found
        if self.abbreviation is not WHOLE:
            widths[HOST] = max(len(self._header[HOST]), widest)


def line_text(
    words: Words,
    sizes: Sizes,
    status: str,
    widths: tuple[int, ...],
    header: Sequence[str] = tuple(HEADER),
    reason_room: int = 0,
) -> Text:
    """One line: each word in its column (numbers to the right, a word too long cut with "…"). reason_room: the
    name column's word is a host's reason, given that many cells in place of the (blank) columns after it."""
    parts = []
    for column, word, n, width in zip(header, words, sizes, widths):
        if reason_room and column == "name":
            width = reason_room
        if n > width:
            word, n = set_cell_size(word, width - 1) + "…", width
        parts.append(" " + (" " * (width - n) + word if column in RIGHT else word + " " * (width - n)))
        if reason_room and column == "name":
            break  # the reason took the columns after it
    line = Text("".join(parts), end="")
    style = STATUS_STYLE.get(status)
    if style and words[STATUS]:
        start = sum(len(p) for p in parts[:STATUS]) + 1  # in characters, as Text's spans count
        line.stylize(style, start, start + len(parts[STATUS].strip()))
    return line
