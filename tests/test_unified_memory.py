"""Issue 25 item 4: on unified-memory parts (GB10 in DGX Spark) NVML answers NotSupported for memory info; the
NVIDIA adapter then gives the host's memory, as nvitop does, labelled "unified (host memory)"."""

from __future__ import annotations

import copy
import sys

import psutil
from conftest import H100
from fakes import make_fake_pynvml, real_pynvml
from tui_helpers import field_value, live_detail, no_torch, wait_until

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
