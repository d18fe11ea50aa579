"""Check results by status: a count per device and status (0 included, so `> 0` alerts work), one info
series per check, and when the checks ran."""

from __future__ import annotations

from collections import Counter

from gpudash.exporter.family import Family, info
from gpudash.exporter.remembered import epoch_seconds
from gpudash.exporter.scrape import Scrape

STATUSES = ("pass", "warn", "fail", "error", "skip")


def families(scrape: Scrape) -> list[Family]:
    counts = Family("gpudash_check_results", "Remembered check results of the device by status (count)")
    each = info("gpudash_check_result_info", "One remembered check result: plugin, check and status (value 1)")
    when = Family("gpudash_check_timestamp_seconds", "When the remembered checks of this device ran, Unix seconds")
    known = {d.key for d in scrape.devices}
    by_device: dict[str, list[dict]] = {}
    for result in scrape.results.checks:
        if result.get("device") in known:
            by_device.setdefault(result["device"], []).append(result)
    for key, results in by_device.items():
        tally = Counter(r.get("status") for r in results)
        for status in STATUSES:
            counts.add(scrape.with_labels(key, status=status), tally.get(status, 0))
        for r in results:
            labels = scrape.with_labels(key, plugin=r.get("plugin") or "", check=r.get("check") or "")
            each.add({**labels, "status": r.get("status") or ""}, 1)
        stamps = [epoch_seconds(r.get("checked_at")) for r in results]
        when.add(scrape.with_labels(key), max((s for s in stamps if s is not None), default=None))
    return [counts, each, when]
