"""Allocated but idle, over the readings `gpudash serve` takes (one per scrape): gpudash.allocation.idle judges
them, with [idle] after_s and utilization_pct. Published with live telemetry (or with --job-labels, which
reads the devices too); a GPU whose reading cannot be judged (processes or utilization n/a) has no series."""

from __future__ import annotations

import time

from gpudash.allocation.idle import IdleWatch
from gpudash.exporter.family import Family
from gpudash.exporter.scrape import Scrape


def families(scrape: Scrape, watch: IdleWatch, now: float | None = None) -> list[Family]:
    flag = Family(
        "gpudash_device_allocated_idle",
        "1 when processes hold the GPU and its utilization stayed at most [idle] utilization_pct for [idle] after_s",
    )
    seconds = Family(
        "gpudash_device_allocated_idle_seconds",
        "How long processes have held the GPU at near-0 utilization, as serve's readings saw it (0: not now)",
    )
    gpus = [d for d in scrape.devices if d.vendor != "cpu"]
    watch.record({d.key: scrape.sample(d) for d in gpus}, now if now is not None else time.time())
    for device in gpus:
        if not watch.judged(device.key):
            continue
        stretch = watch.stretch(device.key)
        labels = scrape.with_labels(device)
        flag.add(labels, int(stretch is not None and stretch.flagged))
        seconds.add(labels, stretch.seconds if stretch is not None else 0)
    return [flag, seconds]
