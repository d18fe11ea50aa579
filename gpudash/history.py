"""Recent telemetry per device, in bounded ring buffers, and downsampling for charts.

Pure Python (no Textual, no torch) so it is cheap to import and easy to test. The TUI keeps one
`History` for the whole machine; a chart asks for a series already downsampled to its width, because
plotext's build time grows with the number of points.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Iterable, Mapping

from gpudash.models import Sample

# Metric name -> how to read it from a Sample (None when the device could not say).
METRICS = ("memory_pct", "utilization_pct", "temperature_c", "power_w")


def memory_pct(sample: Sample, total: int | None = None) -> float | None:
    """Used memory in percent; `total` stands in when the sample does not carry one (replayed samples)."""
    used, total = sample.memory_used_bytes, sample.memory_total_bytes or total
    if used is None or not total:
        return None
    return 100.0 * used / total


def metric_value(sample: Sample, metric: str, memory_total: int | None = None) -> float | None:
    if metric == "memory_pct":
        return memory_pct(sample, memory_total)
    value = getattr(sample, metric, None)
    return None if value is None else float(value)


def capacity_for(history_seconds: float, refresh_interval: float) -> int:
    """How many samples cover `history_seconds` at one sample per `refresh_interval` (at least 2)."""
    if refresh_interval <= 0:
        raise ValueError("refresh_interval must be positive")
    return max(2, math.ceil(history_seconds / refresh_interval))


class History:
    """The last `capacity` readings of each metric of each device; older ones fall off the front."""

    def __init__(self, capacity: int, metrics: Iterable[str] = METRICS) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.metrics = tuple(metrics)
        self._series: dict[str, dict[str, deque[float | None]]] = {}

    def record(self, samples: Mapping[str, Sample], memory_totals: Mapping[str, int | None] | None = None) -> None:
        """Append one reading per device (keyed by DeviceInfo.key); missing values are kept as None.

        `memory_totals` (key -> bytes, from DeviceInfo) is used when a sample has no total of its own.
        """
        totals = memory_totals or {}
        for key, sample in samples.items():
            per_device = self._series.setdefault(key, {m: deque(maxlen=self.capacity) for m in self.metrics})
            for metric, buffer in per_device.items():
                buffer.append(metric_value(sample, metric, totals.get(key)))

    def series(self, key: str, metric: str) -> list[float | None]:
        per_device = self._series.get(key)
        if per_device is None or metric not in per_device:
            return []
        return list(per_device[metric])

    def latest(self, key: str, metric: str) -> float | None:
        per_device = self._series.get(key)
        if not per_device or not per_device.get(metric):
            return None
        return per_device[metric][-1]

    def keys(self) -> list[str]:
        return list(self._series)

    def __len__(self) -> int:
        """The number of readings held for the device with the most (0 when empty)."""
        return max((len(next(iter(s.values()), ())) for s in self._series.values()), default=0)


def downsample(values: list[float | None], width: int) -> list[float | None]:
    """At most `width` points: the mean of each consecutive bucket, ignoring gaps (None).

    A bucket with no values at all stays None, so a chart shows the gap instead of inventing a reading.
    """
    if width < 1:
        return []
    if len(values) <= width:
        return list(values)
    out: list[float | None] = []
    n = len(values)
    for i in range(width):
        bucket = [v for v in values[i * n // width : (i + 1) * n // width] if v is not None]
        out.append(sum(bucket) / len(bucket) if bucket else None)
    return out


class FixedRing:
    """The last `capacity` values of one series, in storage allocated once: appending allocates nothing (a
    deque allocates a block every 64 appends and frees the oldest), and a number takes the array's item size
    instead of a Python object each. `typecode` is the array module's."""

    __slots__ = ("_buf", "_next", "size")

    def __init__(self, capacity: int, typecode: str = "d", fill: float = math.nan) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._buf = array(typecode, [fill]) * capacity
        self._next = 0
        self.size = 0

    def append(self, value: float) -> None:
        self._buf[self._next] = value
        self._next = (self._next + 1) % len(self._buf)
        self.size = min(self.size + 1, len(self._buf))

    def values(self) -> list:
        """Oldest first."""
        start = self._next - self.size
        if start >= 0:
            return self._buf[start : self._next].tolist()
        return self._buf[start:].tolist() + self._buf[: self._next].tolist()
