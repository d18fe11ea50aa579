"""The health checks and the raw counters they judged, read at a slower cadence than telemetry.

Reading a GPU's counters takes some 60 driver calls, and the checks also read the kernel log and sysfs, so
`gpudash serve` reads them at most once every `[health] read_interval_s` (30 s) and serves the cached verdicts
in between; a scrape never waits on the driver for them except the first after the interval. The counters
are read once per round and handed to the checks, so the raw series and the verdicts describe the same reading.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from gpudash.health.catalog import HealthResult
from gpudash.health.thresholds import Thresholds


@dataclass
class HealthReading:
    results: list[HealthResult] = field(default_factory=list)
    counters: dict[str, dict[str, Any]] = field(default_factory=dict)  # device key -> {"counters", "unavailable"}
    read_at: float | None = None  # Unix seconds; None before the first reading


class _ReadOnce:
    """The machine as the checks see it, its health readers answering this round's counters."""

    def __init__(self, machine: Any, counters: dict[str, dict[str, Any]]) -> None:
        self._machine = machine
        self.health_readers = {key: (lambda raw=raw: raw) for key, raw in counters.items()}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._machine, name)


def read_counters(machine: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for key, reader in machine.health_readers.items():
        try:
            raw = reader()
        except Exception as exc:  # an in-process adapter raising: every counter of the GPU is unknown
            raw = {"counters": {}, "unavailable": {"all": str(exc) or type(exc).__name__}}
        out[key] = raw if isinstance(raw, dict) else {"counters": {}, "unavailable": {"all": "no answer"}}
    return out


class HealthCache:
    def __init__(self, machine: Any, config: dict[str, Any], clock=time.monotonic) -> None:
        self.machine = machine
        self.limits = Thresholds.from_config(config)
        self.interval_s = float(((config or {}).get("health") or {}).get("read_interval_s", 30.0))
        self._clock = clock
        self._reading = HealthReading()
        self._taken: float | None = None
        self._lock = threading.Lock()

    def current(self) -> HealthReading:
        """The cached reading, or a new one when it is older than the interval."""
        with self._lock:
            now = self._clock()
            if self._taken is None or now - self._taken >= self.interval_s:
                self._reading = self._read()
                self._taken = now
            return self._reading

    def _read(self) -> HealthReading:
        from gpudash.health.run import run_health

        counters = read_counters(self.machine)
        results = run_health(_ReadOnce(self.machine, counters), self.limits)
        return HealthReading(results, counters, time.time())
