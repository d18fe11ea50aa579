"""One device in full: its card (gauges, readings, badges, history chart) and every field, n/a with its reason.

Opened from the dense table (enter on a row, or D); ← → (or [ ]) step to the neighbouring device; escape
returns. The field list covers what nvidia-smi, gpustat and nvitop show (UUID, PCI bus, driver and CUDA
driver, fan, encoder/decoder, power limit, P-state, persistence, compute mode, ECC, MIG mode and instances),
each with the driver's reason where it is n/a (gpudash.tui.widgets.detail_fields). This module is imported, and
the widget mounted, when a device is first opened (the dashboard's first screen has neither); the card and the
field list then.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.tui import stylesheets
from gpudash.tui.stylesheets import DETAIL_CSS
from gpudash.tui.widgets.chart_lines import LINES
from gpudash.tui.widgets.live_table import LiveColumn, LiveTable

if TYPE_CHECKING:
    from gpudash.history import History
    from gpudash.tui.widgets.device_card import DeviceCard

# Still importable from here, as before the field list had its module (loaded on first use, PEP 562).
_FROM_FIELDS = ("FIELDS", "FieldRow", "field_rows", "wrapped_rows", "GPU_ONLY", "NVIDIA_ONLY", "AMD_ONLY")


def __getattr__(name: str) -> Any:
    if name not in _FROM_FIELDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from gpudash.tui.widgets import detail_fields

    return getattr(detail_fields, name)


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
        yield from ()  # empty until a device is shown: its widgets come then (_build)

    async def _build(self) -> None:
        if self.children:
            return
        stylesheets.ensure(self.app, DETAIL_CSS)  # the detail's and its card's rules, before they are mounted
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
        from gpudash.render.device_health import health_detail  # a device opened: not on the first frame

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
            from gpudash.tui.widgets.device_card import DeviceCard

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
        from gpudash.tui.widgets.detail_fields import field_rows, wrapped_rows

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
