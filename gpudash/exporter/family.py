"""A gauge family whose samples may carry different label sets.

An NVIDIA GPU has `gpu` and `UUID`, an AMD GPU `gpu_id` and `card_model`, the CPU neither; an empty label
would mean the same to Prometheus but would bloat every line, so each sample carries only its own labels.
"""

from __future__ import annotations

import math

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.samples import Sample

PREFIX = "gpudash_"


class Family(GaugeMetricFamily):
    def __init__(self, name: str, documentation: str) -> None:
        if not name.startswith(PREFIX):
            raise ValueError(f"metric {name!r} lacks the {PREFIX!r} prefix")
        super().__init__(name, documentation)

    def add(self, labels: dict[str, str], value: float | int | bool | None) -> None:
        """One sample; a missing or non-finite value is left out (absent, not a made-up zero)."""
        if value is None:
            return
        number = float(value)
        if not math.isfinite(number):
            return
        self.samples.append(Sample(self.name, {k: str(v) for k, v in labels.items() if v not in (None, "")}, number))


def info(name: str, documentation: str) -> Family:
    if not name.endswith("_info"):
        raise ValueError(f"metadata metric {name!r} must end in _info")
    return Family(name, documentation)
