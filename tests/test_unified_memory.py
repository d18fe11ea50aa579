"""Issue 25 item 4: on unified-memory parts (GB10 in DGX Spark) NVML answers NotSupported for memory info; the
NVIDIA adapter then gives the host's memory, as nvitop does, labelled "unified (host memory)"."""

from __future__ import annotations

import copy
import re
import sys

import psutil
import pytest
from conftest import H100
from fakes import make_fake_pynvml, real_pynvml
from tui_helpers import field_value, live_detail, no_torch, screen_text, wait_until

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.devices.nvidia import NvmlBackend
from gpudash.devices.unified_memory import UNIFIED
from gpudash.tui.app import create_app


def gb10() -> dict:
    device = copy.deepcopy(H100)
    device.update(name="NVIDIA GB10", compute_capability="12.1")
    return device


def _fake(monkeypatch):
    errors = {(None, "nvmlDeviceGetMemoryInfo"): real_pynvml.NVMLError_NotSupported()}
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([gb10()], errors=errors))
    monkeypatch.setitem(sys.modules, "amdsmi", None)


def test_notsupported_memory_falls_back_to_host_memory(monkeypatch):
    _fake(monkeypatch)
    backend = NvmlBackend()
    backend.devices()
    sample = backend.sample(0)
    host_total = psutil.virtual_memory().total
    assert sample.memory_source == UNIFIED == "unified (host memory)"
    assert sample.memory_total_bytes == host_total
    assert sample.memory_used_bytes is not None and 0 < sample.memory_used_bytes <= host_total
    assert "memory" not in sample.unavailable and "memory_used_bytes" not in sample.unavailable
    assert sample.utilization_pct is not None  # the rest of the reading as before


def test_a_gpu_with_its_own_memory_is_not_labelled(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([copy.deepcopy(H100)]))
    backend = NvmlBackend()
    backend.devices()
    sample = backend.sample(0)
    assert sample.memory_source is None and sample.memory_total_bytes == H100["memory_total_bytes"]


async def test_detail_and_card_say_unified(monkeypatch):
    _fake(monkeypatch)
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    app = create_app(discover(include_torch=False), config, add_torch_view=no_torch)
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await live_detail(pilot, app, "nvidia:0")
        memory = field_value(detail, "memory")  # wraps onto lines of its own under the field
        assert "unified (host memory)" in memory and "GiB" in memory
        assert detail.card is not None
        gauge = detail.card.query_one("#memory")
        await wait_until(pilot, lambda: "unified (host memory)" in getattr(gauge, "text", ""))


@pytest.mark.parametrize("units", ["GiB", "MiB"])
async def test_the_device_row_says_unified_whole_at_80_columns(monkeypatch, units):
    """The row's memory figures are the host's: its name says "unified" (the detail says the whole "unified
    (host memory)"), at 80 columns whole, nothing cut, rounded or to the MiB; the CPU's row, with the same
    figures, says nothing."""
    from gpudash.tui.widgets.device_table import DeviceTable

    _fake(monkeypatch)
    config = defaults()
    config["ui"].update(refresh_interval=0.2, memory_units=units)
    app = create_app(discover(include_torch=False), config, add_torch_view=no_torch)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(DeviceTable)
        await wait_until(pilot, lambda: app.latest.get("nvidia:0") is not None and table.row_keys, 30)
        await wait_until(pilot, lambda: "unified" in table.cells_of("nvidia:0")[1].plain)
        assert table.cells_of("nvidia:0")[1].plain.strip() == "GB10 unified"
        assert "unified" not in table.cells_of("cpu:0")[1].plain
        for key in table.row_keys:
            assert not any("…" in cell.plain for cell in table.cells_of(key)), key
        memory = next(i for i, column in enumerate(table.columns) if column.key == "mem")
        shown = table.cells_of("nvidia:0")[memory].plain
        assert ("MiB" in shown) == (units == "MiB") and re.search(r"\d/\d", shown), shown
        await wait_until(pilot, lambda: re.search(r"^ 0 +GB10 unified ", screen_text(app), re.M))
