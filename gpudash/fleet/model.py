"""A round of the fleet: hosts with a status, each with its devices; the `gpudash fleet --json` document."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from gpudash.health.catalog import worst

UP, STALE, UNREACHABLE = "up", "stale", "unreachable"
# An answering host that is not well: a lost GPU or fewer GPUs than expected (degraded), or an endpoint that
# serves no device series where some were expected (empty: a wrong port, another program's /metrics).
DEGRADED, EMPTY = "degraded", "empty"
STATUSES = (UP, DEGRADED, EMPTY, STALE, UNREACHABLE)
FLEET_VERSION = 1


@dataclass
class FailedBefore:
    """A check a GPU failed before, from the memory of bad GPUs its host's gpudash serve publishes
    (gpudash_health_failed_before_*): `host` is where it was remembered, `device` the row it is on now there
    (None: that host no longer has it)."""

    uuid: str
    check_id: str
    severity: str  # the worst seen
    last: float  # Unix seconds of the last sighting
    sightings: int | None
    host: str
    device: str | None = None

    @property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d", time.localtime(self.last))

    def line(self) -> str:
        seen = "" if self.sightings is None else f", seen {self.sightings} time{'s' if self.sightings != 1 else ''}"
        return f"failed {self.check_id} ({self.severity}) on {self.date}{seen}"

    def to_json(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "check_id": self.check_id,
            "severity": self.severity,
            "last": self.last,
            "date": self.date,
            "sightings": self.sightings,
            "host": self.host,
            "device": self.device,
        }


@dataclass
class Device:
    """One accelerator (or a CPU gpudash describes) on a host, merged from every exporter that has it."""

    id: str  # "nvidia:3", "amd:0", "cpu:0": vendor and the vendor's index
    vendor: str
    index: str
    name: str | None = None
    uuid: str | None = None
    utilization_ratio: float | None = None
    memory_used_bytes: float | None = None
    memory_total_bytes: float | None = None
    temperature_celsius: float | None = None
    power_watts: float | None = None
    verified: dict[str, bool] = field(default_factory=dict)  # precision -> gpudash's probe verdict
    amp_dtype: str | None = None  # gpudash's recommendation
    checks_failed: int | None = None  # gpudash's remembered checks with status fail or error
    sources: list[str] = field(default_factory=list)  # "dcgm", "amd", "gpudash"
    targets: list[str] = field(default_factory=list)  # the scrape targets that described it (direct scraping)
    history: list[tuple[float, float]] = field(default_factory=list)  # (unix seconds, utilisation 0-1)
    mig_instance: str | None = None  # a MIG instance's GPU_I_ID: a row under its GPU (id "nvidia:0/mig2")
    mig_profile: str | None = None  # its GPU_I_PROFILE
    lost: bool | None = None  # gpudash_device_lost: the driver can no longer reach it (None: not said)
    health_checks: dict[str, str] = field(default_factory=dict)  # check ID -> severity (gpudash_health_check_status)
    vbios: str | None = None  # dcgm-exporter's DCGM_FI_DEV_VBIOS_VERSION label, where it is configured
    # The checks this GPU failed before: on this host, or on another host of the fleet (the same board moved)
    failed_before: list[FailedBefore] = field(default_factory=list)

    key: str = ""  # what merged it across exporters (gpudash.fleet.series.Identity.key); not in the JSON
    health_read: bool = False  # gpudash_health_timestamp_seconds: its checks ran (OK unless a finding says)

    @property
    def health(self) -> str | None:
        """Its worst health severity (CRITICAL, WARN, UNKNOWN, OK), None where no check was published."""
        return worst(self.health_checks.values()) or ("OK" if self.health_read else None)

    @property
    def gpu_id(self) -> str:
        """The GPU this row is or belongs to ("nvidia:0" for its MIG instances too)."""
        return self.id.split("/", 1)[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "vendor": self.vendor,
            "index": self.index,
            "name": self.name,
            "uuid": self.uuid,
            "utilization_ratio": self.utilization_ratio,
            "memory_used_bytes": self.memory_used_bytes,
            "memory_total_bytes": self.memory_total_bytes,
            "temperature_celsius": self.temperature_celsius,
            "power_watts": self.power_watts,
            "verified": dict(self.verified),
            "amp_dtype": self.amp_dtype,
            "checks_failed": self.checks_failed,
            "sources": list(self.sources),
            "targets": list(self.targets),
            "history": [[t, v] for t, v in self.history],
            "lost": self.lost,
            "health": self.health,
            "health_findings": {k: v for k, v in sorted(self.health_checks.items()) if v != "OK"},
            "failed_before": [f.to_json() for f in self.failed_before],
            "mig": None
            if self.mig_instance is None
            else {"gpu_instance_id": self.mig_instance, "profile": self.mig_profile, "gpu": self.gpu_id},
        }


@dataclass(frozen=True)
class Usage:
    """GPU memory a user's or job's processes hold on one GPU of a host."""

    gpu: str  # the GPU's UUID, or its key where the exporter gives no UUID
    memory_bytes: float
    user: str | None = None
    job: str | None = None


@dataclass
class Host:
    name: str
    status: str  # up | stale | unreachable
    error: str | None = None
    targets: list[str] = field(default_factory=list)
    last_seen: float | None = None  # unix seconds of the newest data
    replayed: bool = False  # a gpudash serving a snapshot, not this host's hardware
    devices: list[Device] = field(default_factory=list)
    expected_gpus: int | None = None  # --expect-gpus or the hostfile's column; None: not said
    host_checks: dict[str, str] = field(default_factory=dict)  # the machine's own checks (device_key="host")
    problems: list[str] = field(default_factory=list)  # why an answering host is degraded or empty
    versions: dict[str, str] = field(default_factory=dict)  # driver, cuda, rocm, torch, gpudash, vbios
    usage: list[Usage] = field(default_factory=list)  # GPU memory by user and job, where exporters label it
    failed_before: list[FailedBefore] = field(default_factory=list)  # every GPU this host remembers failing

    @property
    def gpus(self) -> int:
        """GPUs it described (MIG instances and CPUs not counted)."""
        return sum(1 for d in self.devices if d.vendor != "cpu" and d.mig_instance is None)

    @property
    def health(self) -> str | None:
        """The worst health severity of its devices and its own checks."""
        return worst([*self.host_checks.values(), *(d.health for d in self.devices)])

    def to_json(self, now: float) -> dict[str, Any]:
        return {
            "host": self.name,
            "status": self.status,
            "error": self.error,
            "targets": list(self.targets),
            "last_seen": self.last_seen,
            "age_s": None if self.last_seen is None else round(max(0.0, now - self.last_seen), 3),
            "replayed": self.replayed,
            "devices": [d.to_json() for d in self.devices],
            "gpus": self.gpus,
            "expected_gpus": self.expected_gpus,
            "health": self.health,
            "problems": list(self.problems),
            "versions": dict(self.versions),
            "failed_before": [f.to_json() for f in self.failed_before],
        }


@dataclass
class FleetRound:
    source: dict[str, Any]  # {"kind": "prometheus", "url": ...} or {"kind": "hosts", "targets": n}
    hosts: list[Host]
    started: float  # unix seconds
    took_s: float
    deadline_s: float
    dropped: list[str] = field(default_factory=list)  # targets that did not answer within the deadline
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # A board remembered failing on one host and now on another (moved, RMA'd and sent back): its new row
        # carries the old host's memory too, however the round was read.
        remembered: dict[str, list[FailedBefore]] = {}
        for host in self.hosts:
            for failure in host.failed_before:
                remembered.setdefault(failure.uuid, []).append(failure)
        for host in self.hosts:
            for device in host.devices:
                elsewhere = [
                    f
                    for f in remembered.get(device.uuid or "", [])
                    if f.host != host.name and f not in device.failed_before
                ]
                if elsewhere and device.mig_instance is None:
                    device.failed_before = sorted(device.failed_before + elsewhere, key=lambda f: -f.last)

    def host(self, name: str) -> Host | None:
        wanted = name.lower()
        for host in self.hosts:
            if host.name.lower() == wanted or any(wanted in t.lower() for t in host.targets):
                return host
        return None

    def summary(self) -> dict[str, int]:
        counts = {s: sum(1 for h in self.hosts if h.status == s) for s in STATUSES}
        return {
            "hosts": len(self.hosts),
            **counts,
            "devices": sum(1 for h in self.hosts for d in h.devices if d.mig_instance is None),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FLEET_VERSION,
            "source": dict(self.source),
            "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "round": {"took_s": round(self.took_s, 3), "deadline_s": self.deadline_s, "dropped": list(self.dropped)},
            "summary": self.summary(),
            "hosts": [h.to_json(self.started + self.took_s) for h in self.hosts],
            "notes": list(self.notes),
        }
