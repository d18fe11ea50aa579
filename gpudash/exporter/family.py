"""Gauge and counter families whose samples may carry different label sets.

An NVIDIA GPU has `gpu` and `UUID`, an AMD GPU `gpu_id` and `card_model`, the CPU neither; an empty label
would mean the same to Prometheus but would bloat every line, so each sample carries only its own labels.
"""

from __future__ import annotations

import math

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.samples import Sample

PREFIX = "gpudash_"
MEGA = 1e6


def per_mega(value: float | None) -> float | None:
    """A reading in mega-units (MHz, MT/s) in base units (hertz, T/s); absent stays absent."""
    return None if value is None else value * MEGA


def _sample(name: str, labels: dict[str, str], value: float | int | bool | None) -> Sample | None:
    """One sample; a missing or non-finite value is left out (absent, not a made-up zero), so are empty labels."""
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number):
        return None
    return Sample(name, {k: str(v) for k, v in labels.items() if v not in (None, "")}, number)


class Family(GaugeMetricFamily):
    def __init__(self, name: str, documentation: str) -> None:
        if not name.startswith(PREFIX):
            raise ValueError(f"metric {name!r} lacks the {PREFIX!r} prefix")
        super().__init__(name, documentation)

    def add(self, labels: dict[str, str], value: float | int | bool | None) -> None:
        sample = _sample(self.name, labels, value)
        if sample is not None:
            self.samples.append(sample)


class Counter(CounterMetricFamily):
    """A counter family (a value that only grows), its samples named `<name>_total` as Prometheus expects."""

    def __init__(self, name: str, documentation: str) -> None:
        if not name.startswith(PREFIX) or not name.endswith("_total"):
            raise ValueError(f"counter {name!r} needs the {PREFIX!r} prefix and the _total suffix")
        super().__init__(name, documentation)

    def add(self, labels: dict[str, str], value: float | int | None) -> None:
        sample = _sample(self.name + "_total", labels, value)
        if sample is not None:
            self.samples.append(sample)


def info(name: str, documentation: str) -> Family:
    if not name.endswith("_info"):
        raise ValueError(f"metadata metric {name!r} must end in _info")
    return Family(name, documentation)
