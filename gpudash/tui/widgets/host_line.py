"""The host line above the devices: CPU, memory, swap and load average, like nvitop's host panel in one line,
then the driver facts nvitop and nvidia-smi print above the GPUs: the driver and CUDA driver versions and the
compute mode (gpudash.render.driver_facts).

Where the line is too narrow, whole parts are left out in HOST_DROP_ORDER (documented in docs/cli.md, "The
dashboard on a narrow terminal") and a marker counts them ("+2›"); `w` shows every part, the line wrapping
onto a second one. On a replayed machine it names the recorded host and says that no host load was recorded,
rather than showing this machine's load beside another machine's GPUs.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gpudash.actions.host import REPLAYED_NO_HOST_LOAD
from gpudash.devices.host_load import HostLoad
from gpudash.render import monitor
from gpudash.render.column_fit import dropped_marker, fit_columns
from gpudash.render.formatting import NA
from gpudash.render.memory_units import used_of_mib
from gpudash.tui.widgets.bars import Palette, bar, level_style

# Its short form where the whole sentence does not fit (docs/cli.md, "The dashboard on a narrow terminal").
REPLAYED_SHORT = "host load not recorded (replayed)"
WIDE_AT = 110  # from here the CPU and memory figures get bars
SEPARATOR = " │ "
# The parts left out first where the line is too narrow: the host's load before the driver facts the GPUs
# depend on, the compute mode before the versions. The host name is never left out.
HOST_DROP_ORDER = ("load", "SWP", "CPU", "MEM", "compute", "CUDA", "driver")


class HostLine(Static):
    DEFAULT_CSS = """
    HostLine { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, hostname: str | None, replayed: bool, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.hostname = hostname or "?"
        self.replayed = replayed
        self.load: HostLoad | None = None
        self.facts: list[tuple[str, str]] = []  # (title, text): driver, CUDA, compute (show_facts)
        self.show_all = False  # `w`: every part, on two lines where one is too narrow
        self.exact_memory = False  # `m`: memory to the MiB
        self.dropped: list[str] = []  # the titles of the parts left out, in HOST_DROP_ORDER
        self._shown: Text | None = None
        self._palette: Palette | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.show_load(None)

    def _theme_changed(self, _theme: object) -> None:
        self._palette, self._shown = None, None
        self.show_load(self.load)

    def _set(self, text: Text) -> None:
        if text != self._shown:  # an unchanged line costs nothing; a changed one no relayout (one row)
            self._shown = text
            lines = len(text.plain.split("\n"))
            if self.styles.height is None or self.styles.height.value != lines:
                self.styles.height = lines
            self.update(text, layout=False)

    def on_resize(self) -> None:
        self.show_load(self.load)

    def show_facts(self, facts: list[tuple[str, str]]) -> None:
        """The driver facts (gpudash.render.driver_facts.driver_parts); redrawn only when they changed."""
        if facts != self.facts:
            self.facts = list(facts)
            self.show_load(self.load)

    def show_load(self, load: HostLoad | None) -> None:
        self.load = load
        if self._palette is None:
            self._palette = Palette.of(self.app)
        p = self._palette
        width = self.size.width or 80
        head = Text.assemble(("host ", p.track), (self.hostname, p.label))
        parts: list[tuple[str, Text]] = [("host", head)]
        if self.replayed:
            others = sum(len(text) + len(SEPARATOR) for _, text in self.facts)
            room = width - head.cell_len - len(SEPARATOR) - (0 if self.show_all else others)
            words = REPLAYED_NO_HOST_LOAD if len(REPLAYED_NO_HOST_LOAD) <= room else REPLAYED_SHORT
            parts.append(("load", Text(words, style=p.muted)))
        elif load is None:
            self._set(Text.assemble(head, ("  reading…", p.muted)))
            return
        else:
            parts += self._load_parts(load, p, wide=width >= WIDE_AT)
        parts += [(title, self._fact(text, p)) for title, text in self.facts]
        self._set(self._joined(parts, width, p))

    def _fact(self, text: str, p: Palette) -> Text:
        name, _, value = text.partition(" ")
        return Text.assemble((name + " ", p.track), value)

    def _load_parts(self, load: HostLoad, p: Palette, *, wide: bool) -> list[tuple[str, Text]]:
        cpu_frac = None if load.cpu_pct is None else load.cpu_pct / 100
        mem_frac = (
            load.memory_used_bytes / load.memory_total_bytes
            if load.memory_used_bytes is not None and load.memory_total_bytes
            else None
        )
        cpus = f" ×{load.logical_cpus}" if load.logical_cpus else ""
        cpu = Text.assemble(("CPU ", p.track), monitor.percent(load.cpu_pct, 1), cpus)
        used = (
            used_of_mib(load.memory_used_bytes, load.memory_total_bytes)
            if self.exact_memory
            else monitor.used_of(load.memory_used_bytes, load.memory_total_bytes, wide=wide)
        )
        mem = Text.assemble(
            ("MEM ", p.track), used, f" {monitor.percent(None if mem_frac is None else mem_frac * 100)}"
        )
        if wide:
            cpu = Text.assemble(cpu, " ", bar(cpu_frac, 10, level_style(cpu_frac, p.util, p, 0.9, 0.98), p.track))
            mem = Text.assemble(mem, " ", bar(mem_frac, 10, level_style(mem_frac, p.memory, p, 0.9, 0.97), p.track))
        parts = [("CPU", cpu), ("MEM", mem)]
        if load.swap_total_bytes:
            swap = (
                used_of_mib(load.swap_used_bytes, load.swap_total_bytes)
                if self.exact_memory
                else monitor.used_of(load.swap_used_bytes, load.swap_total_bytes, wide=wide)
            )
            parts.append(("SWP", Text.assemble(("SWP ", p.track), swap)))
        average = " ".join(f"{x:.2f}" for x in load.load_average) if load.load_average else NA
        parts.append(("load", Text.assemble(("load ", p.track), average)))
        return parts

    def _joined(self, parts: list[tuple[str, Text]], width: int, p: Palette) -> Text:
        """The parts that fit, in their order, with a marker counting those left out; with `w` every part,
        wrapped at a separator onto a second line where one line is too narrow."""
        separator = Text(SEPARATOR, style=p.track)
        if self.show_all:
            self.dropped = []
            lines: list[Text] = [Text()]
            for i, (_, text) in enumerate(parts):
                if i and lines[-1].cell_len + len(SEPARATOR) + text.cell_len > width:
                    lines.append(Text("  "))
                elif i:
                    lines[-1].append_text(separator)
                lines[-1].append_text(text)
            return Text("\n").join(lines)
        titles = [title for title, _ in parts]
        cells = [[text.plain for _, text in parts]]
        # Each part costs its text and a separator; the first has none (hence width + the separator).
        kept, self.dropped = fit_columns(
            titles, cells, width + len(SEPARATOR), HOST_DROP_ORDER, gap=len(SEPARATOR), marker=5
        )
        line = separator.join([parts[i][1] for i in kept])
        if self.dropped:
            line.append(f"  {dropped_marker(self.dropped)}", style=p.muted)
        return line
