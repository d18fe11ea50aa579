"""A benchmark run as `gpudash bench` keeps it, for tests that remember a measurement.

The history's reader checks each run against the bench contract and leaves out one that breaks it, so a test
must keep a whole document: one built by the bench code itself, with the given speedups over fp32.
"""

from __future__ import annotations

from gpudash.contracts.validation import problems
from gpudash.measure.bench.replay import replayed_report
from gpudash.measure.bench.report import bench_json
from gpudash.measure.bench.store import append_run


def keep_run(machine, device, speedups: dict[str, float], measured: list[str] | None = None, when: str | None = None):
    """Keep a run of `device` in `machine`'s bench history; `measured` are the precisions it ran (default: fp32
    and those with a speedup)."""
    ran = measured if measured is not None else ["fp32", *speedups]
    doc = bench_json(machine, {device.key: replayed_report(device, sorted({"fp32", *ran}), "quick", None)}, "quick")
    entry = doc["devices"][0]
    entry["measured_at"] = when
    entry["speedup_vs_fp32"] = dict(speedups)
    for precision in ran:
        entry["precisions"][precision].update(supported=True, measured_gflops=100.0, failure_reason=None)
    assert problems("bench", doc) == [], problems("bench", doc)
    append_run(machine, doc)
