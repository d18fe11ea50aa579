"""One device in full: its card (gauges, readings, badges, history chart) and every field, n/a with its reason.

Opened from the dense table (enter on a row, or D); ← → (or [ ]) step to the neighbouring device; escape
returns. The field list covers what nvidia-smi, gpustat and nvitop show (UUID, PCI bus, driver and CUDA
driver, fan, encoder/decoder, power limit, P-state, persistence, compute mode, ECC, MIG mode and instances),
each with the driver's reason where it is n/a.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from gpudash.info import device_status
from gpudash.knowledge import arch_for
from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render import formatting as fmt
from gpudash.render.device_health import health_detail
from gpudash.render.na_reasons import na_reason
from gpudash.render.throughput import bar1_text, tx_rx
from gpudash.tui.widgets.chart_lines import LINES
from gpudash.tui.widgets.device_card import DeviceCard, missing_reason
from gpudash.tui.widgets.device_table import mig_label
from gpudash.tui.widgets.live_table import LiveColumn, LiveTable

if TYPE_CHECKING:
    from gpudash.history import History

GPU_ONLY = ("nvidia", "amd")
NVIDIA_ONLY = ("nvidia",)
AMD_ONLY = ("amd",)


@dataclass(frozen=True)
class FieldRow:
    label: str
    field: str  # the Sample/DeviceInfo/Runtime field whose reason explains an n/a
    value: Callable[[DeviceInfo, Sample, Runtime], object]
    vendors: tuple[str, ...] = ("nvidia", "amd", "cpu")
    source: str = "sample"  # where the reason is looked up: sample, device or runtime


FIELDS = (
    FieldRow("UUID", "uuid", lambda d, s, r: d.uuid, GPU_ONLY, "device"),
    FieldRow("PCI bus", "pci_bus_id", lambda d, s, r: d.pci_bus_id, GPU_ONLY, "device"),
    FieldRow("driver", "driver", lambda d, s, r: d.driver_version or r.driver, GPU_ONLY, "runtime"),
    FieldRow("CUDA driver", "cuda_driver", lambda d, s, r: r.cuda_driver, NVIDIA_ONLY, "runtime"),
    FieldRow("VBIOS", "vbios", lambda d, s, r: d.vbios, GPU_ONLY, "device"),
    FieldRow("architecture", "arch", lambda d, s, r: f"{arch_for(d).family} · {fmt.arch_label(d)}", source="device"),
    FieldRow("SMs / CUs / cores", "multiprocessors", lambda d, s, r: d.multiprocessors, source="device"),
    FieldRow("max clock", "max_clock_mhz", lambda d, s, r: _unit(d.max_clock_mhz, "MHz"), source="device"),
    FieldRow("memory", "memory_used_bytes", lambda d, s, r: _memory(d, s)),
    FieldRow("utilization", "utilization_pct", lambda d, s, r: _pct(s.utilization_pct)),
    FieldRow(
        "memory bandwidth busy", "memory_utilization_pct", lambda d, s, r: _pct(s.memory_utilization_pct), GPU_ONLY
    ),
    FieldRow("BAR1 memory", "bar1_used_bytes", lambda d, s, r: bar1_text(s), NVIDIA_ONLY),
    FieldRow(
        "PCIe", "pcie_tx_bytes_per_s", lambda d, s, r: tx_rx(s.pcie_tx_bytes_per_s, s.pcie_rx_bytes_per_s), NVIDIA_ONLY
    ),
    FieldRow(
        "NVLink",
        "nvlink_tx_bytes_per_s",
        lambda d, s, r: tx_rx(s.nvlink_tx_bytes_per_s, s.nvlink_rx_bytes_per_s),
        NVIDIA_ONLY,
    ),
    FieldRow("temperature", "temperature_c", lambda d, s, r: _unit(s.temperature_c, "°C")),
    FieldRow("power draw", "power_w", lambda d, s, r: _unit(s.power_w, "W", 1)),
    FieldRow("power limit", "power_limit_w", lambda d, s, r: _unit(s.power_limit_w, "W"), GPU_ONLY),
    FieldRow("fan", "fan_speed_pct", lambda d, s, r: _pct(s.fan_speed_pct), GPU_ONLY),
    FieldRow("SM clock", "sm_clock_mhz", lambda d, s, r: _unit(s.sm_clock_mhz, "MHz")),
    FieldRow("memory clock", "memory_clock_mhz", lambda d, s, r: _unit(s.memory_clock_mhz, "MHz"), GPU_ONLY),
    FieldRow("encoder", "encoder_utilization_pct", lambda d, s, r: _pct(s.encoder_utilization_pct), GPU_ONLY),
    FieldRow("decoder", "decoder_utilization_pct", lambda d, s, r: _pct(s.decoder_utilization_pct), GPU_ONLY),
    FieldRow("performance state", "performance_state", lambda d, s, r: s.performance_state, GPU_ONLY),
    FieldRow("persistence mode", "persistence_mode", lambda d, s, r: s.persistence_mode, NVIDIA_ONLY),
    FieldRow("display active", "display_active", lambda d, s, r: _yes_no(s.display_active), NVIDIA_ONLY),
    FieldRow("compute mode", "compute_mode", lambda d, s, r: s.compute_mode, NVIDIA_ONLY),
    FieldRow("ECC errors (uncorrected)", "ecc_errors_uncorrected", lambda d, s, r: s.ecc_errors_uncorrected, GPU_ONLY),
    FieldRow("MIG mode", "mig_mode", lambda d, s, r: _mig_mode(s), NVIDIA_ONLY),
    FieldRow("partition", "partition", lambda d, s, r: _partition(d), AMD_ONLY, "device"),  # AMD's MIG
    FieldRow("processes", "processes", lambda d, s, r: _count(s), GPU_ONLY),
)


def _unit(value: float | None, unit: str, digits: int = 0) -> str | None:
    return None if value is None else f"{value:.{digits}f} {unit}"


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:.0f}%"


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("yes" if value else "no")


def _memory(device: DeviceInfo, sample: Sample) -> str | None:
    used, total = sample.memory_used_bytes, sample.memory_total_bytes or device.memory_total_bytes
    if used is None:
        return None
    share = f" ({used / total:.0%})" if total else ""
    source = f" · {sample.memory_source}" if sample.memory_source else ""  # GB10: the host's memory, said so
    return fmt.memory(used, total) + share + source


def _mig_mode(sample: Sample) -> str | None:
    if sample.mig_mode is None:
        return None
    pending = sample.mig_mode_pending
    return sample.mig_mode + (f" (after reset: {pending})" if pending and pending != sample.mig_mode else "")


def _partition(device: DeviceInfo) -> str | None:
    """'compute CPX · memory NPS4': amdsmi's two partition modes, each named, as the table's tag is not."""
    modes = [
        f"{kind} {mode}"
        for kind, mode in (("compute", device.compute_partition), ("memory", device.memory_partition))
        if mode
    ]
    return " · ".join(modes) or None


def _count(sample: Sample) -> str | None:
    if sample.processes is None:
        return None
    return str(len(sample.processes))


def field_rows(device: DeviceInfo, sample: Sample | None, runtime: Runtime) -> list[tuple[str, str, str]]:
    """(field, value, why n/a) for every field that applies to the device's vendor."""
    status, reason = device_status(device, sample)
    rows = [("status", status if reason is None else f"{status}: {reason}", "")]
    current = sample or Sample()
    for row in FIELDS:
        if device.vendor not in row.vendors:
            continue
        value = row.value(device, current, runtime)
        if value is not None:
            rows.append((row.label, str(value), ""))
            continue
        if row.source in ("runtime", "device"):  # the card's words for the same case (render/na_reasons.py)
            why = na_reason(
                row.field,
                device.sources,
                {row.field: (runtime if row.source == "runtime" else device).unavailable.get(row.field, "")},
            )
        else:
            why = missing_reason(row.field, sample, device)
        rows.append((row.label, fmt.NA, why))
    for instance in (sample.mig_instances if sample else None) or []:
        procs = "n/a" if instance.processes is None else str(len(instance.processes))
        parts = [
            fmt.memory(instance.memory_used_bytes, instance.memory_total_bytes),
            f"{instance.multiprocessors or fmt.NA} SMs",
            f"{procs} process(es)",
            f"GI {instance.gpu_instance_id} CI {instance.compute_instance_id}",
            instance.uuid or fmt.NA,
        ]
        why = " · ".join(f"{k}: {v}" for k, v in instance.unavailable.items())
        rows.append((f"└ MIG {device.index}:{instance.index} {mig_label(instance)}", " · ".join(parts), why))
    return rows


def wrapped_rows(rows: list[tuple[str, str, str]], value_w: int, why_w: int) -> list[tuple[str, list[Text]]]:
    """The field rows as table lines: a value or reason wider than its column wraps onto lines of its own
    under it (at spaces; a UUID without spaces is broken, every character kept), never cut: "not reported
    by repl…" hid which source was meant."""
    lines: list[tuple[str, list[Text]]] = []
    for label, value, why in rows:
        values = textwrap.wrap(value, value_w, break_on_hyphens=False) or [""]
        whys = textwrap.wrap(why, why_w, break_on_hyphens=False) or [""]
        for i in range(max(len(values), len(whys))):
            part = values[i] if i < len(values) else ""
            lines.append(
                (
                    label if i == 0 else f"{label}\x00{i}",  # continuation lines: keys of their own
                    [
                        Text(" " + (label if i == 0 else ""), style="bold"),
                        Text(" " + part, style="dim italic" if value == fmt.NA else ""),
                        Text(" " + (whys[i] if i < len(whys) else ""), style="dim"),
                    ],
                )
            )
    return lines


class DeviceDetail(VerticalScroll):
    """The detail of one device; `show_device` picks which, `show_sample` keeps it live."""

    BINDINGS = [
        Binding("left,left_square_bracket", "step(-1)", "Prev device", key_display="←"),
        Binding("right,right_square_bracket", "step(1)", "Next device", key_display="→"),
    ]

    def __init__(self, *, interval_s: float, window_s: float, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.interval_s, self.window_s = interval_s, window_s
        self.device: DeviceInfo | None = None
        self.card: DeviceCard | None = None
        self._swapping = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield from ()  # hidden until a device is opened: its widgets come then (_build), not on the first frame

    async def _build(self) -> None:
        if self.children:
            return
        fields = LiveTable(id="detail-fields", show_cursor=False)
        fields.can_focus = False
        await self.mount_all(
            [
                Static("", id="detail-title", markup=False),
                Static("", id="detail-health", markup=False),  # the GPU's health findings, under the card
                fields,
            ]
        )

    def on_mount(self) -> None:
        if hasattr(self.app, "health_applied"):
            self.app.health_applied.subscribe(self, lambda _health: self.show_health())

    def show_health(self) -> None:
        """The device's health: the worst severity and where it came from, each finding with its action, and
        what `gpudash check` remembered this GPU failing (app.health, read by gpudash.tui.health_watch)."""
        app: Any = self.app  # the GpudashApp (its health fields); a bare App in a widget test has none
        if self.device is None or not hasattr(app, "health"):
            return
        interval = None if app.machine.replayed else app.health_watch.interval_s
        lines = health_detail(app.health.get(self.device.key), read=app.health_read, interval_s=interval)
        worst = getattr(app.health.get(self.device.key), "worst", None)
        style = {"CRITICAL": "bold red", "WARN": "yellow", "UNKNOWN": "dim"}.get(worst or "", "")
        text = Text(lines[0], style=style)  # the verdict in its colour, the findings plain
        for line in lines[1:]:
            text.append("\n" + line)
        self.query_one("#detail-health", Static).update(text)

    async def show_device(self, device: DeviceInfo, runtime: Runtime, torch_state: str, source: str) -> None:
        # Opened (hidden until now) or another device: start at the top, where the title and card name it.
        # A refresh of the device shown (torch's view arriving) keeps where the user scrolled to.
        from_top = not self.display or self.card is None or self.card.device.key != device.key
        await self._build()
        if self.card is None or self.card.device.key != device.key:
            # Shielded: the opening worker is exclusive, so ← → ← quickly cancels it, and a card cancelled
            # mid-mount could not be removed again (Textual's prune re-raised the cancellation).
            await asyncio.shield(self._swap_card(device))
        card = self.card
        if card is None or card.device.key != device.key:
            return  # another opening's swap came after this one's: that opening shows its own device
        if from_top:
            self.scroll_home(animate=False)
        self.device = device
        card.describe(device, runtime, torch_state, source)
        self.show_health()
        self.query_one("#detail-title", Static).update(
            Text.assemble(
                (f"{device.key}  {device.name}", "bold"),
                ("  ← → other devices · escape or D: back to all devices · every field below the card", "dim"),
            )
        )

    async def _swap_card(self, device: DeviceInfo) -> None:
        """The card of `device` in place of the last one, one swap at a time. No card while they swap:
        readings land between the awaits (the poll's, every refresh), and the old card's gauges are going
        while the new one's are not built until its mount is done."""
        async with self._swapping:
            if self.card is not None and self.card.device.key == device.key:
                return
            self.card = None
            await self.query(DeviceCard).remove()
            card = DeviceCard(device, interval_s=self.interval_s, window_s=self.window_s)
            card.add_class("detail-card")
            await self.mount(card, after="#detail-title")
            self.card = card

    def show_sample(self, sample: Sample | None, runtime: Runtime, history: History) -> None:
        if self.device is None or self.card is None or self.card.device.key != self.device.key:
            return  # a card on its way in, or one a cancelled opening left: the next reading is its own
        series = {metric: history.series(self.device.key, metric) for metric in LINES}
        self.card.show_sample(sample, series)
        table = self.query_one("#detail-fields", LiveTable)
        rows = field_rows(self.device, sample, runtime)
        width = max(20, (self.size.width or 80) - 2)
        label_w = max(len(r[0]) for r in rows)
        longest_why = max(len(r[2]) for r in rows)  # often none: the values then take the room
        value_w = min(max(len(r[1]) for r in rows), 64, max(12, width - label_w - 3 - min(longest_why, 24)))
        why_w = max(10, width - label_w - value_w - 3)
        columns = [
            LiveColumn("field", Text(" FIELD", style="bold"), label_w + 1),
            LiveColumn("value", Text(" VALUE", style="bold"), value_w + 1),
            LiveColumn("why", Text(" WHY N/A", style="bold"), why_w + 1),
        ]
        table.show(columns, wrapped_rows(rows, value_w, why_w))

    def action_step(self, step: int) -> None:
        self.post_message(StepDevice(step))


class StepDevice(Message):
    """The user asked for the previous (-1) or next (+1) device's detail."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step
