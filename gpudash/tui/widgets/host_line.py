"""The host line above the devices: CPU, memory, swap and load average, like nvitop's host panel in one line.

On a replayed machine it names the recorded host and says that no host load was recorded, rather than
showing this machine's load beside another machine's GPUs.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gpudash.actions.host import REPLAYED_NO_HOST_LOAD
from gpudash.devices.host_load import HostLoad
from gpudash.render import monitor
from gpudash.render.formatting import NA
from gpudash.tui.widgets.bars import Palette, bar, level_style

# Its short form where the whole sentence does not fit (docs/cli.md, "The dashboard on a narrow terminal").
REPLAYED_SHORT = "host load not recorded (replayed)"
WIDE_AT = 110  # from here the CPU and memory figures get bars


class HostLine(Static):
    DEFAULT_CSS = """
    HostLine { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, hostname: str | None, replayed: bool, **kwargs: object) -> None:
        super().__init__("", markup=False, **kwargs)  # type: ignore[arg-type]
        self.hostname = hostname or "?"
        self.replayed = replayed
        self.load: HostLoad | None = None
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
            self.update(text, layout=False)

    def on_resize(self) -> None:
        self.show_load(self.load)

    def show_load(self, load: HostLoad | None) -> None:
        self.load = load
        if self._palette is None:
            self._palette = Palette.of(self.app)
        p = self._palette
        head = Text.assemble(("host ", p.track), (self.hostname, p.label))
        if self.replayed:
            room = (self.size.width or 80) - head.cell_len - 3
            words = REPLAYED_NO_HOST_LOAD if len(REPLAYED_NO_HOST_LOAD) <= room else REPLAYED_SHORT
            self._set(Text.assemble(head, (" │ " + words, p.muted)))
            return
        if load is None:
            self._set(Text.assemble(head, ("  reading…", p.muted)))
            return
        wide = self.size.width >= WIDE_AT
        cpu_frac = None if load.cpu_pct is None else load.cpu_pct / 100
        mem_frac = (
            load.memory_used_bytes / load.memory_total_bytes
            if load.memory_used_bytes is not None and load.memory_total_bytes
            else None
        )
        parts: list[Text] = [head]
        cpus = f" ×{load.logical_cpus}" if load.logical_cpus else ""
        cpu = Text.assemble(("CPU ", p.track), monitor.percent(load.cpu_pct, 1), cpus)
        mem = Text.assemble(
            ("MEM ", p.track),
            monitor.used_of(load.memory_used_bytes, load.memory_total_bytes, wide=wide),
            f" {monitor.percent(None if mem_frac is None else mem_frac * 100)}",
        )
        if wide:
            cpu = Text.assemble(cpu, " ", bar(cpu_frac, 10, level_style(cpu_frac, p.util, p, 0.9, 0.98), p.track))
            mem = Text.assemble(mem, " ", bar(mem_frac, 10, level_style(mem_frac, p.memory, p, 0.9, 0.97), p.track))
        parts += [cpu, mem]
        if load.swap_total_bytes:
            parts.append(
                Text.assemble(
                    ("SWP ", p.track), monitor.used_of(load.swap_used_bytes, load.swap_total_bytes, wide=wide)
                )
            )
        average = " ".join(f"{x:.2f}" for x in load.load_average) if load.load_average else NA
        parts.append(Text.assemble(("load ", p.track), average))
        self._set(Text(" │ ", style=p.track).join(parts))
