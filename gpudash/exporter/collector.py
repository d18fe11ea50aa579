"""GpudashCollector: every gpudash metric, assembled at scrape time from cached results and one sample.

Registered in its own CollectorRegistry (no process or platform collectors: the series are about the
devices, not about this Python process). `describe()` lists the metric names without reading anything, so
`/metrics?name[]=gpudash_device_utilization_ratio` serves just those series (the fleet view asks that way).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry

from gpudash.allocation.idle import IdleRule, IdleWatch
from gpudash.exporter import (
    bench,
    build,
    checks,
    devices,
    failed_before,
    health,
    health_counters,
    idle,
    jobs,
    labels,
    mamf,
    partitions,
    precisions,
    recommendation,
    telemetry,
)
from gpudash.exporter.family import Family
from gpudash.exporter.health_cache import HealthCache, HealthReading
from gpudash.exporter.remembered import RememberedResults, Results
from gpudash.exporter.scrape import Scrape

BATCH_MODULES = (build, devices, precisions, bench, mamf, checks, failed_before)


class GpudashCollector:
    def __init__(
        self,
        machine,
        config: dict[str, Any],
        *,
        telemetry: bool = True,
        hostname: str | None = None,
        job_labels: bool = False,
    ) -> None:
        self.machine = machine
        self.config = config
        self.telemetry = telemetry
        self.job_labels = job_labels  # opt-in: per-job series name users and jobs (gpudash.exporter.jobs)
        self.hostname = hostname or machine.host.hostname or socket.gethostname()
        self.labels = {d.key: labels.identity(d, self.hostname) for d in machine.devices}
        self.remembered = RememberedResults(machine)
        self.health = HealthCache(machine, config)  # read every [health] read_interval_s, not at each scrape
        self.idle = IdleWatch(IdleRule.from_config(config))  # allocated but idle, over the scrapes' readings
        self.clock: Callable[[], float] = time.time  # when each scrape's reading was taken (tests step it)
        self._decided: dict[str, dict[str, Any]] = {}
        self._decided_for: tuple | None = None
        self._batch: list[Family] = []
        self._batch_for: tuple | None = None
        self._lock = threading.Lock()  # scrapes arrive on the server's threads; one collects at a time

    def _scrape(self, results: Results) -> Scrape:
        return Scrape(self.machine, self.hostname, self.labels, results, self.config)

    def _recommendations(self, scrape: Scrape) -> dict[str, dict[str, Any]]:
        if self._decided_for != self.remembered.signature:
            decided = {}
            for device in scrape.devices:
                try:
                    decided[device.key] = recommendation.settings_for(scrape, device)
                except Exception:  # a rule that cannot decide for an odd device drops its series, not the scrape
                    continue
            self._decided, self._decided_for = decided, self.remembered.signature
        return self._decided

    def batch_families(self) -> tuple[list[Family], tuple | None]:
        """What changes only when a remembered result changes on disk, and the signature of that state (the
        HTTP app re-encodes these only when it moved: gpudash.exporter.http)."""
        with self._lock:
            if self._batch_for != self.remembered.current_signature():
                scrape = self._scrape(self.remembered.current())
                batch: list[Family] = []
                for module in BATCH_MODULES:
                    batch += module.families(scrape)
                batch += recommendation.families(scrape, self._recommendations(scrape))
                self._batch, self._batch_for = batch, self.remembered.signature
            return list(self._batch), self._batch_for

    def live_families(self) -> list[Family]:
        """Live telemetry, read at every scrape (none with --no-telemetry), and the health verdicts and counters,
        read again once they are older than [health] read_interval_s (also with --no-telemetry: dcgm-exporter
        and AMD's exporter publish no verdict)."""
        with self._lock:  # one device reading at a time; telemetry needs no remembered result, so none is read
            scrape = self._scrape(Results())
            reading = self.health.current()
            live = telemetry.families(scrape) + partitions.mig_families(scrape) if self.telemetry else []
            if self.job_labels:
                live += jobs.families(scrape, self.config["serve"]["max_job_series"])
            if self.telemetry or self.job_labels:  # the devices were read for this scrape
                live += idle.families(scrape, self.idle, self.clock())
            verdicts = health.families(scrape, reading) + health_counters.families(scrape, reading)
            return live + verdicts + partitions.partition_families(scrape, reading)

    def families(self) -> list[Family]:
        return self.batch_families()[0] + self.live_families()

    def collect(self) -> Iterator[Family]:
        for family in self.families():
            if family.samples:
                yield family

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """Names only (prometheus_client's registry uses them for `name[]` filtering); reads nothing."""
        empty = Scrape(_NoDevices(self.machine), self.hostname, {}, Results(), self.config)
        names: list[Family] = []
        for module in BATCH_MODULES:
            names += module.families(empty)
        names += recommendation.families(empty, {})
        if self.telemetry:
            names += telemetry.families(empty) + partitions.mig_families(empty)
        if self.job_labels:
            names += jobs.families(empty, 0)
        if self.telemetry or self.job_labels:
            names += idle.families(empty, IdleWatch(IdleRule()))
        names += health.families(empty, HealthReading()) + health_counters.families(empty, HealthReading())
        names += partitions.partition_families(empty, HealthReading())
        for family in names:
            yield GaugeMetricFamily(family.name, family.documentation)


class _NoDevices:
    """The machine with its device list emptied: the families' names without their samples."""

    def __init__(self, machine) -> None:
        self._machine = machine
        self.devices: list = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._machine, name)


def registry_for(
    machine, config: dict[str, Any], *, telemetry: bool = True, hostname: str | None = None, job_labels: bool = False
):
    """A registry holding only gpudash's collector; returns (registry, collector)."""
    registry = CollectorRegistry(auto_describe=False)
    collector = GpudashCollector(machine, config, telemetry=telemetry, hostname=hostname, job_labels=job_labels)
    registry.register(collector)
    return registry, collector
