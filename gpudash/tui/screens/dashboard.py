"""The Dashboard view: one DeviceCard per device, laid out in as many columns as the width allows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import ItemGrid, VerticalScroll

from gpudash.models import Sample
from gpudash.tui.widgets.device_card import DeviceCard
from gpudash.tui.widgets.history_chart import LINES
from gpudash.tui.widgets.precision_badges import BadgeLegend

if TYPE_CHECKING:
    from gpudash.tui.app import GpudashApp

CARD_MIN_WIDTH = 96  # facts (about 58 columns) beside a chart still worth reading


class DashboardView(VerticalScroll):
    app: GpudashApp

    def __init__(self, app: GpudashApp) -> None:
        super().__init__(id="dashboard")
        self._devices = list(app.machine.devices)
        self._interval = app.refresh_interval
        self._window = app.history_seconds

    def compose(self) -> ComposeResult:
        yield BadgeLegend(id="legend")
        with ItemGrid(id="cards", min_column_width=CARD_MIN_WIDTH):
            for device in self._devices:
                yield DeviceCard(device, interval_s=self._interval, window_s=self._window)

    def on_mount(self) -> None:
        self.app.samples_applied.subscribe(self, self.show_samples)
        self.app.machine_changed.subscribe(self, self.machine_changed)
        self.watch(self, "scroll_y", self._bring_into_view_up_to_date, init=False)
        self.describe_cards()
        if self.app.latest:
            self.show_samples(self.app.latest)

    def on_resize(self) -> None:
        self._bring_into_view_up_to_date()

    def _bring_into_view_up_to_date(self, _scroll_y: float = 0) -> None:
        if self.app.latest:
            self.show_samples(self.app.latest)

    def describe_cards(self) -> None:
        machine = self.app.machine
        by_key = {d.key: d for d in machine.devices}
        for card in self.query(DeviceCard):
            device = by_key.get(card.device.key, card.device)
            source = "replayed" if machine.replayed else "live · " + "+".join(device.sources)
            card.describe(device, machine.runtime, self.app.torch_state, source)

    async def machine_changed(self, _machine: object = None) -> None:
        """torch's view may add devices (a GPU without NVML/amdsmi): rebuild the cards if the set changed."""
        devices = list(self.app.machine.devices)
        if [d.key for d in devices] != [c.device.key for c in self.query(DeviceCard)]:
            grid = self.query_one("#cards", ItemGrid)
            await grid.remove_children()
            await grid.mount_all(DeviceCard(d, interval_s=self._interval, window_s=self._window) for d in devices)
        self.describe_cards()
        if self.app.latest:
            self.show_samples(self.app.latest, force=True)  # a device's n/a reasons may have changed

    def show_samples(self, samples: dict[str, Sample], force: bool = False) -> None:
        """Update the cards in view. Cards scrolled out of view are skipped: refreshing an off-screen
        widget makes Textual re-arrange the whole screen, which was half the idle cost with 8 GPUs.
        Scrolling or resizing brings the newly visible cards up to date."""
        if not all(node.display for node in self.ancestors_with_self):
            return  # another tab is showing; the app republishes the latest samples when this one is shown
        history = self.app.history
        viewport = self.region
        with self.app.batch_update():
            for card in self.query(DeviceCard):
                key = card.device.key
                if card.sample is not None and card.sample is samples.get(key) and not force:
                    continue  # already showing this reading
                if card.sample is not None and not viewport.overlaps(card.region):
                    continue
                series = {metric: history.series(key, metric) for metric in LINES}
                card.show_sample(samples.get(key), series)
