"""Issue 25, first screen: the detail view opens at its top naming the device, and an n/a reason has the same
words in the card, the detail view and gpudash.render.na_reasons."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from tui_helpers import no_torch, open_detail, wait_until

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render.na_reasons import na_reason, not_reported
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_card import missing_reason
from gpudash.tui.widgets.device_detail import DeviceDetail, field_rows
from gpudash.tui.widgets.device_table import DeviceTable

DGX_H100 = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "dgx-h100-8gpu.json"


async def test_the_detail_reopens_at_its_top_naming_the_device():
    app = create_app(discover(replay=str(DGX_H100), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.latest and app.query(DeviceTable) and app.query_one(DeviceTable).row_keys)
        await open_detail(pilot, app, "nvidia:7")
        detail = app.query_one(DeviceDetail)
        title = str(detail.query_one("#detail-title", Static).render())
        assert title.startswith("nvidia:7  NVIDIA H100 80GB HBM3")
        await wait_until(pilot, lambda: detail.max_scroll_y > 0)  # at 80x24 the fields go below the screen
        detail.scroll_end(animate=False)
        await wait_until(pilot, lambda: detail.scroll_y > 0)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not detail.display)
        await open_detail(pilot, app, "nvidia:7")  # the same device again: at the top, not where it was left
        await wait_until(pilot, lambda: detail.scroll_y == 0)
        detail.scroll_end(animate=False)
        await wait_until(pilot, lambda: detail.scroll_y > 0)
        await pilot.press("right")  # the next device also opens at its top
        await wait_until(pilot, lambda: detail.device is not None and detail.device.key == "nvidia:0")
        await wait_until(pilot, lambda: detail.scroll_y == 0)
        assert str(detail.query_one("#detail-title", Static).render()).startswith("nvidia:0  ")


def test_one_wording_for_a_reading_nothing_reported():
    device = DeviceInfo(vendor="nvidia", index=0, name="GPU", sources=["nvml"])
    sample = Sample()
    # The card and the detail view's rows say the same for a sample field and a device or runtime field.
    assert missing_reason("fan_speed_pct", sample, device) == not_reported(["nvml"]) == "not reported by nvml"
    rows = {label: why for label, _value, why in field_rows(device, sample, Runtime())}
    assert rows["CUDA driver"] == rows["fan"] == "not reported by nvml"  # was "not reported by the driver"
    # The driver's own reason wins, the sample's before the device's, "all" for every field.
    assert na_reason("fan", ["nvml"], {"fan": "NotSupported"}, {"fan": "other"}) == "NotSupported"
    assert na_reason("fan", ["nvml"], {"all": "GPU is lost"}) == "GPU is lost"
    assert na_reason("fan", [], None, {}) == "not reported by any source"


async def test_a_reading_that_lands_while_the_next_device_opens_is_shown_not_a_crash():
    """← / → swap the detail's card: the old one is removed and the next one mounted, each an await. A reading
    landing in between (the poll's, every refresh) went to a card that had no gauges yet, and the dashboard died
    with NoMatches('#memory') (CI, test_tui.py). Readings are given at every step of the swap here."""
    import asyncio
    import contextlib

    from gpudash.tui.widgets.device_card import DeviceCard

    app = create_app(discover(replay=str(DGX_H100), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.latest and app.query(DeviceTable) and app.query_one(DeviceTable).row_keys)
        await open_detail(pilot, app, "nvidia:0")
        detail = app.query_one(DeviceDetail)
        machine, runtime = app.machine, app.machine.runtime
        for key in ("nvidia:1", "nvidia:2", "nvidia:1"):
            device = next(d for d in machine.devices if d.key == key)
            swap = asyncio.ensure_future(detail.show_device(device, runtime, "", "replayed"))
            steps = 0
            while not swap.done():
                detail.show_sample(app.latest.get(key), runtime, app.history)  # as the poll does, mid-swap
                await asyncio.sleep(0)
                steps += 1
            await swap
            assert steps > 1  # the swap did wait, so readings landed inside it
            assert detail.card is not None and detail.card.device.key == key
            detail.show_sample(app.latest.get(key), runtime, app.history)
        # A swap cancelled at each of its steps (the next ← → cancels the opening worker), then another: one
        # card, the last device's.
        for cancel_after in range(1, 8):
            first = next(d for d in machine.devices if d.key == "nvidia:3")
            swap = asyncio.ensure_future(detail.show_device(first, runtime, "", "replayed"))
            for _ in range(cancel_after):
                await asyncio.sleep(0)
            swap.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await swap
            device = next(d for d in machine.devices if d.key == "nvidia:1")
            await detail.show_device(device, runtime, "", "replayed")
            await pilot.pause(0.05)
            assert [card.device.key for card in detail.query(DeviceCard)] == ["nvidia:1"], cancel_after
        assert str(detail.query_one("#detail-title", Static).render()).startswith("nvidia:1  ")
