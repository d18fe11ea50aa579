"""The dense device view: one line per device, MIG devices indented under their GPU (nvitop's compact mode).

Every column is offered: index, name, util and memory bars, temperature, power and limit, fan, SM clock,
memory clock, P-state, encoder/decoder, the precision mark and HEALTH. The name carries an AMD GPU's partition
modes ("MI300X CPX · NPS4") and, on a unified-memory part whose memory figures are the host's, "unified" ("GB10
unified"). Where they do not all fit with the name whole, whole columns are left out in DROP_ORDER (documented
in docs/cli.md, "The dashboard on a narrow terminal") and a last column counts them ("+3›"); at 80 columns
HEALTH stays. `w` shows every column, the table scrolling sideways (left/right); enter opens the device's
detail with every field. n/a cells are dim; their reasons are in the detail view. A lost GPU says LOST with the
driver's reason code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from rich.style import Style
from rich.text import Text
from textual.binding import Binding

from gpudash.devices.amd_partition import partition_tag
from gpudash.info import device_status, precision_support
from gpudash.models import LOST, DeviceInfo, MigInstance, Sample
from gpudash.render import monitor
from gpudash.render.column_fit import dropped_marker, fit_columns
from gpudash.render.formatting import NA
from gpudash.render.memory_units import used_of_mib
from gpudash.render.short_forms import without_aside
from gpudash.tui.widgets.bars import Palette, bar, level_style
from gpudash.tui.widgets.health_mark import health_mark
from gpudash.tui.widgets.live_table import LiveColumn, LiveTable, Row
from gpudash.tui.widgets.precision_badges import badge_levels

WIDE_AT = 120  # columns from which the extra fields fit
MEMORY_WARN, MEMORY_ERROR = 0.9, 0.97
HOT_C = 85  # degrees from which the temperature is shown amber


class Field(NamedTuple):
    key: str
    header: str
    right: bool = False


WIDE = (
    Field("gpu", "GPU"),
    Field("name", "NAME"),
    Field("util", "UTIL"),
    Field("mem", "MEMORY"),
    Field("temp", "TEMP", True),
    Field("power", "POWER", True),
    Field("fan", "FAN", True),
    Field("clock", "SM MHz", True),
    Field("mclock", "MEM MHz", True),
    Field("pstate", "PERF"),
    Field("encdec", "ENC/DEC", True),
    Field("prec", "PREC"),
    Field("health", "HEALTH"),
)
# The columns left out first where the table is too narrow (by header). GPU, NAME, UTIL, MEMORY and HEALTH
# are never left out: the table scrolls sideways instead.
DROP_ORDER = ("ENC/DEC", "PERF", "MEM MHz", "FAN", "SM MHz", "PREC", "TEMP", "POWER")
CLOCK_ALONE = Field("clock", "MHz", True)  # the SM clock's header once the memory clock is left out
WIDE_INDEX = {f.key: i for i, f in enumerate(WIDE)}
UTIL, MEM = WIDE_INDEX["util"], WIDE_INDEX["mem"]


UTIL_BAR_MAX, MEMORY_BAR_MAX = 20, 24


def bar_widths(width: int) -> tuple[int, int]:
    """The smallest (util bar, memory bar) for a table this wide; spare columns widen them further."""
    return (8, 10) if width >= WIDE_AT else (3, 3)


def mig_label(instance: MigInstance) -> str:
    """ "3g.40gb" from "NVIDIA H100 80GB HBM3 MIG 3g.40gb"; else the GI/CI ids."""
    name = instance.name or ""
    if " MIG " in name:
        return name.rsplit(" MIG ", 1)[1]
    return f"GI {instance.gpu_instance_id} CI {instance.compute_instance_id}"


class DeviceTable(LiveTable):
    BINDINGS = [Binding("enter", "select", "Details", tooltip="the highlighted device: its card, charts, every field")]

    def __init__(self, devices: Sequence[DeviceInfo], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.devices: list[DeviceInfo] = []
        self.labels: dict[str, str] = {}
        self._marks: dict[str, str] = {}
        self.samples: Mapping[str, Sample] = {}
        self.health: Mapping[str, Any] = {}  # device key -> DeviceHealth: the HEALTH mark (app.health_applied)
        self._palette: Palette | None = None
        self._bars: dict[tuple, tuple[int, int]] = {}  # layout -> (util, memory) bar widths
        self.exact_memory = False  # `m` or [ui] memory_units = "MiB": memory to the MiB ("62771/81559MiB")
        self.show_all = False  # `w`: every column, scrolling sideways
        self.dropped: list[str] = []  # the headers of the columns left out, in DROP_ORDER
        self._wide_text = False  # figures in their long form ("61.3/79.6 GiB"), from WIDE_AT columns
        self._barred: dict[str, tuple[bool, bool]] = {}  # row key -> (util, memory) cell starts with its bar
        self._last_bars: tuple[int, int] = (0, 0)  # the bar widths of the last redraw
        self.set_devices(devices)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        if hasattr(self.app, "health_applied"):
            self.health = getattr(self.app, "health", {})
            self.app.health_applied.subscribe(self, self.show_health)

    def _theme_changed(self, _theme: object) -> None:
        self._palette = None  # the cells are rebuilt in the new colours
        self.redraw()

    @property
    def palette(self) -> Palette:
        if self._palette is None:
            self._palette = Palette.of(self.app)
        return self._palette

    def set_devices(self, devices: Sequence[DeviceInfo]) -> None:
        self.devices = list(devices)
        self.labels = monitor.device_labels(self.devices)
        self._marks = {d.key: monitor.precision_mark(badge_levels(precision_support(d))) for d in self.devices}

    def device_of(self, row_key: str | None) -> DeviceInfo | None:
        """The device of a row (a MIG row belongs to its GPU)."""
        if row_key is None:
            return None
        key = row_key.split("/", 1)[0]
        return next((d for d in self.devices if d.key == key), None)

    def on_resize(self) -> None:
        self.redraw()

    def show_samples(self, samples: Mapping[str, Sample]) -> None:
        self.samples = samples
        self.redraw()

    def show_health(self, health: Mapping[str, Any]) -> None:
        self.health = health
        self.redraw()

    def redraw(self) -> None:
        if not self.is_mounted:
            return
        width = self.size.width or self.app.size.width
        self._wide_text = width >= WIDE_AT
        scrolling = self._row_count() > self._visible_rows()
        # Every column's cells once, with the last reading's bars (usually this reading's too): the columns
        # that fit are worked out from them, and their cells are the rows.
        least = bar_widths(width)
        built_w = self._last_bars if min(self._last_bars[0] - least[0], self._last_bars[1] - least[1]) >= 0 else least
        every = self._rows(WIDE, *built_w)
        fields = self._fitting_fields(width, scrolling, every, built_w)
        # The bars take the columns the others leave. Last reading's bar widths usually still fit exactly;
        # when not, once more from the smallest bars.
        layout = (width, scrolling, tuple(f.header for f in fields), self.exact_memory)
        util_w, mem_w = self._bars.get(layout) or least
        if (util_w, mem_w) == built_w:
            at = [WIDE_INDEX[f.key] for f in fields]
            rows = [(key, [cells[i] for i in at]) for key, cells in every]
        else:
            rows = self._rows(fields, util_w, mem_w)
        spare = self._spare(fields, rows, width, scrolling)
        capped = util_w >= UTIL_BAR_MAX and mem_w >= MEMORY_BAR_MAX
        if spare < 0 or (spare > 1 and not capped):
            if (util_w, mem_w) != least:  # else the rows are already those of the smallest bars
                util_w, mem_w = least
                rows = self._rows(fields, util_w, mem_w)
                spare = self._spare(fields, rows, width, scrolling)
            if spare > 1:
                util_w = min(UTIL_BAR_MAX, util_w + spare // 2)
                mem_w = min(MEMORY_BAR_MAX, mem_w + spare - spare // 2)
                rows = self._rows(fields, util_w, mem_w)
            self._bars[layout] = (util_w, mem_w)
        self._last_bars = (util_w, mem_w)
        widths = self._widths(fields, rows, width, scrolling)
        columns = [LiveColumn(f.key, self._header(f, widths[f.key]), widths[f.key] + 1) for f in fields]
        clipped = [(key, [self._fit(cell, f, widths[f.key]) for cell, f in zip(cells, fields)]) for key, cells in rows]
        if self.dropped:  # a last column counting what was left out; `w` or enter shows it
            marker = dropped_marker(self.dropped)
            columns.append(LiveColumn("dropped", Text(" " + marker, style="dim"), len(marker) + 1))
            clipped = [(key, [*cells, Text("")]) for key, cells in clipped]
        self.show(columns, clipped)

    def _marker_width(self) -> int:
        return len(dropped_marker(self.dropped)) + 1 if self.dropped else 0

    def _fitting_fields(
        self, width: int, scrolling: bool, every: Sequence[Row], built_w: tuple[int, int]
    ) -> tuple[Field, ...]:
        """Every column that fits beside the others with the name whole and the bars at their smallest,
        leaving whole columns out in DROP_ORDER (with `w`, every column). `every`: the rows of every column,
        their bars `built_w` wide; a bar `extra` cells wider than the smallest is that much longer."""
        self.dropped = []
        if not self.show_all:
            least = bar_widths(width)
            extra = (built_w[0] - least[0], built_w[1] - least[1])
            plain = []
            for key, cells in every:
                texts = [cell.plain for cell in cells]
                for column, barred, cut in zip((UTIL, MEM), self._barred.get(key, (False, False)), extra):
                    if barred:
                        texts[column] = texts[column][cut:]
                plain.append(texts)
            header = [f.header for f in WIDE]
            room = width - int(scrolling)  # each column: its widest cell and a leading space
            kept, self.dropped = fit_columns(header, plain, room, DROP_ORDER, gap=1, marker=len("+9›") + 1)
            fields = tuple(WIDE[i] for i in kept)
        else:
            fields = WIDE
        if not any(f.key == "mclock" for f in fields):
            fields = tuple(CLOCK_ALONE if f.key == "clock" else f for f in fields)
        return fields

    def _rows(self, fields: Sequence[Field], util_w: int, mem_w: int) -> list[Row]:
        rows: list[Row] = []
        for device in self.devices:
            sample = self.samples.get(device.key)
            cells, barred = self._device_cells(device, sample, fields, util_w, mem_w)
            rows.append((device.key, cells))
            self._barred[device.key] = (barred, barred)
            for instance in (sample.mig_instances if sample else None) or []:
                key = f"{device.key}/mig{instance.index}"
                rows.append((key, self._mig_cells(device, instance, fields, mem_w)))
                self._barred[key] = (False, True)
        return rows

    def _spare(self, fields: Sequence[Field], rows: Sequence[Row], width: int, scrolling: bool) -> int:
        """Columns left once every column has its widest cell, the name whole (negative: the name would be
        cut, so the bars give their room back first)."""
        widths = self._widths(fields, rows, width, scrolling)
        index = next(i for i, f in enumerate(fields) if f.key == "name")
        widths["name"] = max([8] + [cells[index].cell_len for _, cells in rows if index < len(cells)])
        return width - sum(w + 1 for w in widths.values()) - int(scrolling) - self._marker_width()

    def _row_count(self) -> int:
        return sum(1 + len((s.mig_instances if (s := self.samples.get(d.key)) else None) or []) for d in self.devices)

    def _visible_rows(self) -> int:
        return max(1, self.size.height - 1) if self.size.height else 10**6

    # Cells --------------------------------------------------------------------------------------

    def _device_cells(
        self, device: DeviceInfo, sample: Sample | None, fields: Sequence[Field], util_w: int, mem_w: int
    ) -> tuple[list[Text], bool]:
        """The row's cells, and whether its utilization and memory cells start with their bars (not when the
        GPU is lost or has no reading yet)."""
        p = self.palette
        status, reason = device_status(device, sample)
        name = Text(monitor.short_cpu_name(device.name) if device.vendor == "cpu" else monitor.short_name(device.name))
        partition = partition_tag(device.compute_partition, device.memory_partition)
        if partition:  # an AMD GPU's partition modes, where MIG shows its profile: "MI300X CPX · NPS4"
            name.append(" " + partition, style=p.label)
        if sample is not None and sample.memory_source:  # GB10: its memory figures are the host's ("GB10 unified")
            name.append(" " + without_aside(sample.memory_source), style=p.label)
        label = Text(self.labels.get(device.key, str(device.index)), style=p.label)
        mark = health_mark(self.health.get(device.key), p)
        if status == LOST:
            code = (reason or "lost").split(":", 1)[0]
            lost = {"gpu": label, "name": name, "util": Text("LOST", style=p.error), "mem": Text(code, style=p.error)}
            return [lost.get(f.key, mark if f.key == "health" else Text("")) for f in fields], False
        if sample is None:
            waiting = {"gpu": label, "name": name, "util": Text("…", style=p.muted), "health": mark}
            return [waiting.get(f.key, Text("")) for f in fields], False
        wide = self._wide_text
        util = sample.utilization_pct
        util_frac = None if util is None else util / 100
        used = sample.memory_used_bytes
        total = sample.memory_total_bytes or device.memory_total_bytes
        mem_frac = used / total if used is not None and total else None
        cells = {
            "gpu": label,
            "name": name,
            "util": Text.assemble(
                bar(util_frac, util_w, p.util, p.track), " ", self._value(monitor.percent(util).rjust(4))
            ),
            "mem": Text.assemble(
                bar(mem_frac, mem_w, level_style(mem_frac, p.memory, p, MEMORY_WARN, MEMORY_ERROR), p.track),
                " ",
                self._value(self._used_of(used, total, wide)),
            ),
            "temp": self._value(
                monitor.temperature(sample.temperature_c),
                p.warning if (sample.temperature_c or 0) >= HOT_C else None,
            ),
            "power": self._value(monitor.power(sample.power_w, sample.power_limit_w)),
            "fan": self._value(monitor.percent(sample.fan_speed_pct)),
            "clock": self._value(_mhz(sample.sm_clock_mhz)),
            "mclock": self._value(_mhz(sample.memory_clock_mhz) if device.vendor != "cpu" else ""),
            "pstate": self._value(sample.performance_state or (NA if device.vendor != "cpu" else "")),
            "encdec": self._value(_enc_dec(sample) if device.vendor != "cpu" else ""),
            "prec": Text(self._marks.get(device.key, NA)),
            "health": mark,
        }
        return [cells[f.key] for f in fields], True

    def _mig_cells(self, device: DeviceInfo, instance: MigInstance, fields: Sequence[Field], mem_w: int) -> list[Text]:
        p = self.palette
        gpu = self.labels.get(device.key, str(device.index))
        used, total = instance.memory_used_bytes, instance.memory_total_bytes
        frac = used / total if used is not None and total else None
        cells = {
            "name": Text.assemble(("└ ", p.track), (f"{gpu}:{instance.index} ", p.label), f"MIG {mig_label(instance)}"),
            "mem": Text.assemble(
                bar(frac, mem_w, level_style(frac, p.memory, p, MEMORY_WARN, MEMORY_ERROR), p.track),
                " ",
                self._value(self._used_of(used, total, self._wide_text)),
            ),
        }
        return [cells.get(f.key, Text("")) for f in fields]

    def _used_of(self, used: int | None, total: int | None, wide: bool) -> str:
        return used_of_mib(used, total) if self.exact_memory else monitor.used_of(used, total, wide=wide)

    def _value(self, text: str, style: Style | None = None) -> Text:
        if text == NA:
            return Text(NA, style=self.palette.muted)
        return Text(text, style=style or "")

    # Layout -------------------------------------------------------------------------------------

    def _widths(self, fields: Sequence[Field], rows: Sequence[Row], width: int, scrolling: bool) -> dict[str, int]:
        """Every column as wide as its widest cell; the name takes what is left (at least 8)."""
        widths = {}
        for i, f in enumerate(fields):
            widths[f.key] = max([len(f.header)] + [cells[i].cell_len for _, cells in rows if i < len(cells)])
        others = sum(w + 1 for k, w in widths.items() if k != "name")
        room = width - others - 1 - (1 if scrolling else 0) - self._marker_width()  # leading spaces; scrollbar
        widths["name"] = max(8, min(widths["name"], room))
        return widths

    @staticmethod
    def _header(field: Field, width: int) -> Text:
        label = field.header.rjust(width) if field.right else field.header
        return Text(" " + label, style="bold")

    @staticmethod
    def _fit(cell: Text, field: Field, width: int) -> Text:
        """The cell as its column draws it: a leading space, clipped or right-aligned to `width`. Changed in
        place, without copies: every cell is built afresh for each reading (a few thousand a minute)."""
        length = cell.cell_len
        if length > width:
            cell.truncate(width, overflow="ellipsis")
            cell.pad_left(1)
        else:
            cell.pad_left(1 + (width - length if field.right else 0))
        return cell


def _mhz(value: int | None) -> str:
    return NA if value is None else str(value)


def _enc_dec(sample: Sample) -> str:
    enc, dec = sample.encoder_utilization_pct, sample.decoder_utilization_pct
    if enc is None and dec is None:
        return NA
    return f"{monitor.percent(enc).rstrip('%')}/{monitor.percent(dec)}"
