"""Issue 25 item 4, "BAR1 memory, PCIe and NVLink throughput, and memory-bandwidth utilization, where NVML
reports them": the NVIDIA adapter reads them (gpudash.devices.nvml_throughput) into models.Sample, info --json
and snapshots carry them (a snapshot written before still replays), the detail view and the card show them."""

from __future__ import annotations

import copy
import sys
import time

import pytest
from conftest import H100
from fakes import load_example, make_fake_pynvml
from tui_helpers import field_value, live_detail, no_torch, wait_until

from gpudash.config import defaults
from gpudash.contracts import schema
from gpudash.devices import discover
from gpudash.devices.nvidia import NvmlBackend
from gpudash.devices.nvml_throughput import FIRST_READING, NO_LINKS
from gpudash.models import Sample
from gpudash.render.throughput import rate, traffic_line
from gpudash.tui.app import create_app

GIB, MIB = 1024**3, 1024**2


def busy_h100(index: int = 0) -> dict:
    """An H100 with BAR1, PCIe rates and two active NVLinks of 100 and 50 KiB/s each way (fake NVML keys)."""
    device = copy.deepcopy(H100)
    device["index"] = index
    device["bar1_total_bytes"] = 128 * GIB
    for sample in device["samples"]:
        sample.update(bar1_used_bytes=3 * MIB, pcie_tx_bytes_per_s=5 * MIB, pcie_rx_bytes_per_s=2048)
    device["health"] = {
        "nvlink": [
            {"active": True, "tx_kib_per_s": 100_000, "rx_kib_per_s": 40_000},
            {"active": True, "tx_kib_per_s": 50_000, "rx_kib_per_s": 10_000},
        ]
    }
    return device


@pytest.fixture
def clock(monkeypatch):
    """time.monotonic under the test's hand: the NVLink counters grow with it, the rate is taken over it."""
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    return now


def test_bar1_pcie_and_nvlink_rates_from_nvml(monkeypatch, clock):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([busy_h100(), copy.deepcopy(H100) | {"index": 1}]))
    backend = NvmlBackend()
    backend.devices()
    first = backend.sample(0)
    assert (first.bar1_used_bytes, first.bar1_total_bytes) == (3 * MIB, 128 * GIB)
    assert (first.pcie_tx_bytes_per_s, first.pcie_rx_bytes_per_s) == (5 * MIB, 2048)
    assert first.nvlink_tx_bytes_per_s is None and first.unavailable["nvlink_tx_bytes_per_s"] == FIRST_READING
    clock[0] += 2.0
    second = backend.sample(0)
    assert second.nvlink_tx_bytes_per_s == pytest.approx(150_000 * 1024)  # both links, KiB -> bytes
    assert second.nvlink_rx_bytes_per_s == pytest.approx(50_000 * 1024)
    assert "nvlink_tx_bytes_per_s" not in second.unavailable
    # A board with none of it: each field n/a with NVML's reason, the rest of the reading unharmed.
    plain = backend.sample(1)
    assert plain.bar1_used_bytes is None and plain.unavailable["bar1_total_bytes"] == "NotSupported"
    assert plain.pcie_rx_bytes_per_s is None and plain.unavailable["pcie_rx_bytes_per_s"] == "NotSupported"
    assert plain.unavailable["nvlink_rx_bytes_per_s"] == NO_LINKS and plain.utilization_pct is not None


def test_words():
    assert rate(None) == "n/a" and rate(2048) == "2 KiB/s" and rate(5 * MIB) == "5.00 MiB/s"
    assert rate(150 * MIB) == "150.0 MiB/s" and rate(1.5 * GIB) == "1.50 GiB/s"
    line = traffic_line(Sample(memory_utilization_pct=41, bar1_used_bytes=0, bar1_total_bytes=128 * GIB))
    assert line == "mem bw 41% · BAR1 0.0 / 128.0 GiB"
    assert traffic_line(Sample()) == ""


def test_schemas_carry_the_fields_and_old_snapshots_need_none():
    for name in ("snapshot", "info"):
        sample = schema(name)["$defs"]["sample"]
        for field in ("bar1_used_bytes", "pcie_tx_bytes_per_s", "nvlink_rx_bytes_per_s"):
            assert field in sample["properties"], (name, field)
            assert field in schema(name)["$defs"]["sample_unavailable"]["propertyNames"]["enum"]
    assert "bar1_used_bytes" not in schema("snapshot")["$defs"]["sample"]["required"]  # written before: replays
    assert "bar1_used_bytes" in schema("info")["$defs"]["sample"]["required"]
    machine = discover(replay=str(load_example.__globals__["EXAMPLES"] / "dgx-h100-8gpu.json"), include_torch=False)
    replayed = machine.sample_all()
    assert replayed and all(s.bar1_used_bytes is None for s in replayed.values())


async def test_detail_and_card_show_them(monkeypatch):
    devices = [busy_h100(i) for i in range(2)]
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    app = create_app(discover(include_torch=False), config, add_torch_view=no_torch)
    async with app.run_test(size=(120, 40)) as pilot:
        detail = await live_detail(pilot, app, "nvidia:0")

        def value(label: str) -> str:
            return field_value(detail, label)

        await wait_until(pilot, lambda: value("NVLink").startswith("TX "), 30)  # from the second reading
        assert value("BAR1 memory") == "0.0 / 128.0 GiB"
        assert value("PCIe") == "TX 5.00 MiB/s · RX 2 KiB/s"
        assert value("memory bandwidth busy").endswith("%")
        card = detail.card
        assert card is not None
        await wait_until(pilot, lambda: "NVLink ↑" in str(card.query_one(".traffic").render()))
        assert "BAR1 0.0 / 128.0 GiB" in str(card.query_one(".traffic").render())
