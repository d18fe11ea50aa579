"""Cluster totals for operators: GPUs, memory, utilisation and power by model, and GPU memory per user and job.

Only whole GPUs count (a MIG instance's memory is its GPU's), and only hosts that answered this round (up,
degraded; a stale host's last values are not this round's). A figure no exporter gave is left out of its sum,
and the count of GPUs that gave it is kept beside it, so a total is never an estimate: "power 4.1 kW over 7 of
8 GPUs" says one GPU did not report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash.fleet.model import DEGRADED, UP, FleetRound


@dataclass
class ModelTotal:
    model: str
    gpus: int = 0
    memory_used_bytes: float = 0.0
    memory_total_bytes: float = 0.0
    memory_reported: int = 0  # GPUs that gave both figures
    utilization_sum: float = 0.0
    utilization_reported: int = 0
    power_watts: float = 0.0
    power_reported: int = 0

    @property
    def utilization_ratio(self) -> float | None:
        return self.utilization_sum / self.utilization_reported if self.utilization_reported else None

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "gpus": self.gpus,
            "memory_used_bytes": self.memory_used_bytes,
            "memory_total_bytes": self.memory_total_bytes,
            "memory_reported": self.memory_reported,
            "utilization_ratio": self.utilization_ratio,
            "utilization_reported": self.utilization_reported,
            "power_watts": self.power_watts,
            "power_reported": self.power_reported,
        }


def by_model(fleet: FleetRound) -> list[ModelTotal]:
    """One total per model, the most numerous first, then a line "all" over every model."""
    totals: dict[str, ModelTotal] = {}
    every = ModelTotal("all")
    for host in fleet.hosts:
        if host.status not in (UP, DEGRADED):
            continue
        for d in host.devices:
            if d.mig_instance is not None or d.vendor == "cpu":
                continue
            for total in (totals.setdefault(d.name or "?", ModelTotal(d.name or "?")), every):
                total.gpus += 1
                if d.memory_used_bytes is not None and d.memory_total_bytes is not None:
                    total.memory_used_bytes += d.memory_used_bytes
                    total.memory_total_bytes += d.memory_total_bytes
                    total.memory_reported += 1
                if d.utilization_ratio is not None:
                    total.utilization_sum += d.utilization_ratio
                    total.utilization_reported += 1
                if d.power_watts is not None:
                    total.power_watts += d.power_watts
                    total.power_reported += 1
    ordered = sorted(totals.values(), key=lambda t: (-t.gpus, t.model))
    return [*ordered, every] if len(ordered) > 1 else ordered


@dataclass
class UsageTotal:
    name: str
    memory_bytes: float = 0.0
    gpus: set[tuple[str, str]] = field(default_factory=set)  # (host, GPU)
    hosts: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "memory_bytes": self.memory_bytes,
            "gpus": len(self.gpus),
            "hosts": len(self.hosts),
        }


def usage(fleet: FleetRound, by: str) -> list[UsageTotal]:
    """GPU memory and GPUs per user (`by="user"`) or job (`by="job"`), the largest first; [] where no exporter
    labels its processes or jobs."""
    found: dict[str, UsageTotal] = {}
    for host in fleet.hosts:
        if host.status not in (UP, DEGRADED):
            continue
        for u in host.usage:
            name = u.user if by == "user" else u.job
            if not name:
                continue
            total = found.setdefault(name, UsageTotal(name))
            total.memory_bytes += u.memory_bytes
            total.gpus.add((host.name, u.gpu))
            total.hosts.add(host.name)
    return sorted(found.values(), key=lambda t: (-t.memory_bytes, t.name))
