"""Each GPU's worst health from its driver counters alone, as `gpudash info` shows it beside the device.

Only the counter checks run here (gpudash.health.run.counter_checks: reachability, ECC, rows, XIDs seen, clocks,
PCIe, NVLink, settings): one request per GPU to the contained driver child, milliseconds. The kernel log, the
host's sysfs and the remembered probe are `gpudash check`'s, which info leaves out to stay fast. On a replay the
counters are the ones the snapshot recorded (labelled "replay"); an older snapshot without them judges
reachability only, and says so. What `gpudash check` remembered failing on each GPU (by UUID) comes along.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudash.health.catalog import CRITICAL, UNKNOWN, WARN, HealthResult, worst
from gpudash.health.run import GPU_VENDORS, counter_checks
from gpudash.health.thresholds import Thresholds

LIVE, REPLAY = "live", "replay"
_SHOWN = (CRITICAL, WARN, UNKNOWN)  # the findings listed; OK and not-applicable results are only counted


@dataclass
class DeviceHealth:
    worst: str | None  # None: no check applied
    source: str  # LIVE: read now; REPLAY: from the snapshot's recorded counters
    counters: bool  # the driver's counters were read (or recorded); False: reachability only
    results: list[HealthResult] = field(default_factory=list)
    remembered: list[Any] = field(default_factory=list)  # gpudash.health.memory.Failure, most recent first

    def findings(self) -> list[HealthResult]:
        """WARN, CRITICAL and UNKNOWN results, worst first (CRITICAL, WARN, UNKNOWN), each in check order."""
        return sorted((r for r in self.results if r.severity in _SHOWN), key=lambda r: _SHOWN.index(r.severity))

    def to_json(self) -> dict[str, Any]:
        return {
            "worst": self.worst,
            "source": self.source,
            "counters": self.counters,
            "checks": sum(r.severity is not None for r in self.results),
            "findings": [
                {"id": r.id, "severity": r.severity, "summary": r.summary, "action": r.action} for r in self.findings()
            ],
            "remembered": [f.to_json() for f in self.remembered],
        }


def device_health(machine: Any, limits: Thresholds) -> dict[str, DeviceHealth]:
    """device key -> its health, for every GPU of the machine (the CPU has no counter checks: no entry)."""
    from gpudash.health.memory import remembered

    out: dict[str, DeviceHealth] = {}
    source = REPLAY if machine.replayed else LIVE
    memory = remembered(machine)  # one small file; {} on a replay
    for device in machine.devices:
        if device.vendor not in GPU_VENDORS:
            continue
        results = counter_checks(machine, device, limits)
        read = device.key in machine.health_readers and not any(
            r.id == "gpu.lost" and r.severity == CRITICAL for r in results
        )
        past = memory.get(device.uuid, []) if device.uuid else []
        out[device.key] = DeviceHealth(worst(r.severity for r in results), source, read, results, past)
    return out
