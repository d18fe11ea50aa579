"""Ring buffers and chart downsampling (gpudash.history): pure, no Textual."""

from __future__ import annotations

import pytest

from gpudash.history import History, capacity_for, downsample, memory_pct
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
