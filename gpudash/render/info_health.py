"""The health lines under `gpudash info`'s table: each GPU's worst health from its driver counters, devices that
agree folded into one line, a device with findings on a line of its own (its worst finding and its action)."""

from __future__ import annotations

from typing import Any

from gpudash.plain_text import one_line
from gpudash.render.formatting import key_ranges
from gpudash.render.style import BOLD, DIM, GREEN, RED, YELLOW, Style

_COLORS = {"OK": (GREEN,), "WARN": (YELLOW,), "CRITICAL": (RED, BOLD), "UNKNOWN": (DIM,)}


def health_source(health: dict[str, Any]) -> str:
    """Where a GPU's verdict came from (`DeviceHealth.to_json()`), as `info` and the dashboard say it."""
    if health["source"] == "replay":
        if health["counters"]:
            return "replayed: the counters the snapshot recorded"
        return "replayed: no counters recorded, reachability only"
    return "the driver's counters" if health["counters"] else "reachability only: the counters could not be read"


def health_lines(devices: list[dict[str, Any]], style: Style) -> list[str]:
    quiet: dict[tuple[str, str], list[dict[str, Any]]] = {}
    lines: list[str] = []
    for dev in devices:
        health = dev.get("health")
        if not health or health["worst"] is None:
            continue
        findings = health["findings"]
        if not findings:
            quiet.setdefault((health["worst"], health_source(health)), []).append(dev)
            continue
        first = findings[0]
        action = f" -> {first['action']}" if first["action"] != "none" else ""
        more = f" (+{len(findings) - 1} more: gpudash check)" if len(findings) > 1 else ""
        lines.append(
            f"{style('health', DIM)} {key_ranges([dev])}: {style(health['worst'], *_COLORS[health['worst']])} "
            f"{first['id']}: {one_line(first['summary'], 300)}{action}{more} ({health_source(health)})"
        )
    head = [
        f"{style('health', DIM)} {key_ranges(devs)}: {style(worst, *_COLORS[worst])} ({where})"
        for (worst, where), devs in quiet.items()
    ]
    past = [
        f"{style('remembered', DIM)} {key_ranges([dev])}: failed {f['id']} ({f['severity']}) on {f['last'][:10]}, "
        f"seen {f['count']} time{'s' if f['count'] != 1 else ''}"
        for dev in devices
        for f in ((dev.get("health") or {}).get("remembered") or [])
    ]
    return head + lines + past
