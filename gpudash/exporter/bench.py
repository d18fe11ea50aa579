"""Benchmark results per precision from the remembered history: the newest run that measured each one reliably.

`gpudash bench --precisions bf16` after a full run replaces only bf16's figures, so each precision carries
its own timestamp. FLOP/s are base units (GFLOPS x 1e9); efficiency is measured over the theoretical peak.
A figure measured under contention or beyond what the hardware can do (its details say reliable: false) is not
published as the device's figure; `gpudash_bench_newest_reliable` says whether the newest run's figure was.
"""

from __future__ import annotations

from typing import Any

from gpudash.exporter.family import Family
from gpudash.exporter.remembered import epoch_seconds
from gpudash.exporter.scrape import Scrape
from gpudash.models import DeviceInfo

GIGA = 1e9


def _entry_for(doc: dict[str, Any], device: DeviceInfo) -> dict[str, Any] | None:
    for entry in doc.get("devices") or []:
        if not isinstance(entry, dict) or entry.get("replayed"):
            continue
        key = entry.get("key")
        if key == device.key if key else (entry.get("index") == device.index and entry.get("name") == device.name):
            return entry
    return None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def reliable(result: dict[str, Any]) -> bool:
    details = result.get("details")
    return not (isinstance(details, dict) and details.get("reliable") is False)


def newest_by_precision(
    runs: list[dict[str, Any]], device: DeviceInfo, trusted_only: bool = True
) -> dict[str, tuple[dict, dict]]:
    """precision -> (its result, the device entry of the newest run that measured it (reliably, by default))."""
    found: dict[str, tuple[dict, dict]] = {}
    for doc in runs:
        entry = _entry_for(doc, device)
        if entry is None:
            continue
        for precision, result in (entry.get("precisions") or {}).items():
            if precision in found or not isinstance(result, dict) or not _number(result.get("measured_gflops")):
                continue
            if not trusted_only or reliable(result):
                found[precision] = (result, entry)
    return found


def newest_bandwidth(runs: list[dict[str, Any]], device: DeviceInfo) -> tuple[list[dict], dict] | None:
    for doc in runs:
        entry = _entry_for(doc, device)
        ok = [b for b in (entry or {}).get("memory_bandwidth") or [] if isinstance(b, dict) and b.get("status") == "ok"]
        if entry is not None and ok:
            return ok, entry
    return None


def families(scrape: Scrape) -> list[Family]:
    best = Family("gpudash_bench_matmul_flops_per_second", "Best measured matmul throughput, FLOP/s (int8: op/s)")
    efficiency = Family(
        "gpudash_bench_matmul_efficiency_ratio", "Best measured throughput over the theoretical peak (0-1)"
    )
    speedup = Family("gpudash_bench_speedup_vs_fp32", "Measured throughput over fp32's on the same device (x)")
    bandwidth = Family("gpudash_bench_memory_bandwidth_bytes_per_second", "Measured memory bandwidth, bytes/s")
    when = Family(
        "gpudash_bench_timestamp_seconds", "When the remembered benchmark of this precision ran, Unix seconds"
    )
    newest_ok = Family(
        "gpudash_bench_newest_reliable",
        "1 when the newest benchmark of this precision was reliable; 0 when it ran under contention or was "
        "implausible (the figures above then come from the run before)",
    )
    runs = scrape.results.bench_runs
    for device in scrape.devices:
        for precision, (result, _) in newest_by_precision(runs, device, trusted_only=False).items():
            newest_ok.add(scrape.with_labels(device, precision=precision), 1.0 if reliable(result) else 0.0)
        for precision, (result, entry) in newest_by_precision(runs, device).items():
            labels = scrape.with_labels(device, precision=precision)
            best.add(labels, float(result["measured_gflops"]) * GIGA)  # newest_by_precision checked it
            efficiency.add(labels, _number(result.get("efficiency")))
            speedup.add(labels, _number(result.get("speedup_vs_fp32")))
            when.add(labels, epoch_seconds(entry.get("measured_at")))
        measured = newest_bandwidth(runs, device)
        if measured is not None:
            for item in measured[0]:
                gbps = _number(item.get("gbps"))
                bandwidth.add(
                    scrape.with_labels(device, op=item.get("op") or ""), None if gbps is None else gbps * GIGA
                )
    return [best, efficiency, speedup, bandwidth, when, newest_ok]
