"""Preflight's failures remembered per GPU UUID, in gpudash/health's memory of bad GPUs (health/memory.py), so
`gpudash check` and `gpudash info` on the node later say "this GPU failed preflight.speed on <date>".

The memory is one file per host: one rank per host writes it (the lowest rank there), with the findings of
every rank on that host, so ranks of one node never write the same file at once. A rank whose device has no
UUID (a CPU) has nothing to remember.
"""

from __future__ import annotations

from typing import Any

from gpudash.health.catalog import CATALOG, CRITICAL, WARN, HealthResult


def writer_for(doc: dict[str, Any], hostname: str) -> int | None:
    """The rank that remembers for `hostname`: its lowest rank with a result."""
    ranks = [r["rank"] for r in doc["ranks"] if r["hostname"] == hostname]
    return min(ranks) if ranks else None


def remember_host(machine: Any, doc: dict[str, Any], hostname: str) -> int:
    """Remember the WARN and CRITICAL findings of `hostname`'s ranks whose GPU has a UUID; how many."""
    from gpudash.health.memory import remember

    found = []
    for r in doc["ranks"]:
        device = r.get("device") or {}
        if r["hostname"] != hostname or not device.get("uuid"):
            continue
        for f in r.get("findings", []):
            if f["severity"] in (WARN, CRITICAL) and f["id"] in CATALOG:
                found.append(HealthResult(f["id"], device["key"], f["severity"], f["summary"], dict(f["evidence"]),
                                          f["action"], device["uuid"]))  # fmt: skip
    if found:
        remember(machine, found)
    return len(found)
