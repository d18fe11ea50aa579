"""Ring buffers and chart downsampling (gpudash.history): pure, no Textual."""

from __future__ import annotations

import pytest

from gpudash.actions.fleet import UtilisationHistory
from gpudash.fleet.model import Device, FleetRound, Host
from gpudash.history import FixedRing, History, capacity_for, downsample, memory_pct
from gpudash.models import Sample

GIB = 1024**3


def test_capacity_covers_the_history_window():
    assert capacity_for(600, 1.0) == 600
    assert capacity_for(600, 0.25) == 2400
    assert capacity_for(10, 60) == 2  # never fewer than two points: a line needs two
    with pytest.raises(ValueError):
        capacity_for(600, 0)


def test_buffers_are_bounded_and_keep_the_newest():
    history = History(capacity=3)
    for util in range(10):
        history.record({"nvidia:0": Sample(utilization_pct=util)})
    assert history.series("nvidia:0", "utilization_pct") == [7.0, 8.0, 9.0]
    assert history.latest("nvidia:0", "utilization_pct") == 9.0
    assert len(history) == 3


def test_missing_readings_are_kept_as_gaps_not_zeros():
    history = History(capacity=5)
    history.record({"cpu:0": Sample(utilization_pct=20, power_w=None)})
    history.record({"cpu:0": Sample(utilization_pct=None, unavailable={"utilization_pct": "lost"})})
    assert history.series("cpu:0", "utilization_pct") == [20.0, None]
    assert history.series("cpu:0", "power_w") == [None, None]
    assert history.series("amd:0", "utilization_pct") == []  # unknown device: empty, not an error


def test_memory_percent_uses_the_device_total_when_the_sample_has_none():
    assert memory_pct(Sample(memory_used_bytes=GIB, memory_total_bytes=4 * GIB)) == 25.0
    assert memory_pct(Sample(memory_used_bytes=GIB)) is None
    history = History(capacity=2)
    history.record({"nvidia:0": Sample(memory_used_bytes=2 * GIB)}, memory_totals={"nvidia:0": 8 * GIB})
    assert history.series("nvidia:0", "memory_pct") == [25.0]


def test_downsample_fits_the_width_and_averages_buckets():
    values = [float(i) for i in range(100)]
    out = downsample(values, 10)
    assert len(out) == 10
    assert out[0] == pytest.approx(4.5) and out[-1] == pytest.approx(94.5)
    assert downsample([1.0, 2.0], 40) == [1.0, 2.0]  # already narrow enough: unchanged
    assert downsample(values, 0) == []


def test_downsample_skips_gaps_and_keeps_all_gap_buckets_empty():
    values = [None, None, 10.0, None, None, None]
    assert downsample(values, 3) == [None, 10.0, None]
    assert downsample([7.0] * 1000, 37) == [7.0] * 37


def test_a_fixed_ring_keeps_the_newest_in_order_without_growing():
    ring = FixedRing(3)
    assert ring.values() == []
    ring.append(1.0)
    ring.append(2.0)
    assert ring.values() == [1.0, 2.0] and ring.size == 2
    for value in (3.0, 4.0, 5.0, 6.0, 7.0):
        ring.append(value)
        assert len(ring.values()) == 3
    assert ring.values() == [5.0, 6.0, 7.0]
    small = FixedRing(2, "b", -1)
    small.append(100)
    assert small.values() == [100]
    with pytest.raises(ValueError):
        FixedRing(0)


def _round(started: float, hosts: dict[str, list[float | None]], down: tuple[str, ...] = ()) -> FleetRound:
    made = []
    for name, utils in hosts.items():
        devices = [Device(f"nvidia:{i}", "nvidia", str(i), utilization_ratio=u) for i, u in enumerate(utils)]
        made.append(Host(name, "unreachable" if name in down else "up", devices=devices))
    return FleetRound({"kind": "hosts", "targets": len(made)}, made, started, 0.1, 4.0)


def test_the_fleet_utilisation_history_pairs_each_reading_with_its_round():
    history = UtilisationHistory(points=3)
    history.record(_round(10.0, {"a": [0.5]}))
    history.record(_round(20.0, {"a": [None, 0.25]}))  # a reading missing; a device seen from this round on
    history.record(_round(30.0, {"a": [1.0, 0.0]}, down=("a",)))  # not up: nothing recorded
    history.record(_round(40.0, {"a": [0.333, 0.75]}))
    history.record(_round(50.0, {"a": [0.0, 1.0]}))
    host = _round(50.0, {"a": [0.0, 1.0]}).hosts[0]
    history.fill(host)
    assert host.devices[0].history == [(40.0, 0.33), (50.0, 0.0)]  # 20.0 had no reading; 10.0 fell off
    assert host.devices[1].history == [(20.0, 0.25), (40.0, 0.75), (50.0, 1.0)]
    history.record(_round(60.0, {"b": [0.5]}))  # host a left the fleet: forgotten
    gone = _round(60.0, {"a": [0.5]}).hosts[0]
    history.fill(gone)
    assert gone.devices[0].history == []
