"""The series the fleet reads from each exporter, their units, and how they identify a device and a host.

dcgm-exporter (NVIDIA, etc/default-counters.csv): utilisation in %, framebuffer in MiB, temperature in C,
power in W; devices by `gpu` (NVML index) and `UUID`; the host as `Hostname` (newer releases: `hostname`).
AMD device-metrics-exporter: gfx activity in %, VRAM in MB as amdsmi counts them (MiB), power in W,
junction temperature in C; devices by `gpu_id`; the host as `hostname`. gpudash serve: base units already,
plus what only gpudash knows (verified precisions, the recommended dtype, failed checks).
A GPU that two exporters describe becomes one device: NVIDIA GPUs meet on UUID, AMD GPUs on gpu_id.
A MIG instance (dcgm-exporter's and gpudash's `GPU_I_ID`, `GPU_I_PROFILE` beside the parent GPU's labels) is a
device of its own under its GPU, keyed by the GPU and GPU_I_ID: never merged into the GPU, where the last line
would win.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIB = 2**20


@dataclass(frozen=True)
class Reading:
    source: str  # "dcgm" | "amd" | "gpudash"
    field: str  # a Device attribute, or memory_free_bytes / memory_reserved_bytes (dcgm's total is a sum)
    scale: float = 1.0


LIVE: dict[str, Reading] = {
    "DCGM_FI_DEV_GPU_UTIL": Reading("dcgm", "utilization_ratio", 0.01),
    "DCGM_FI_DEV_FB_USED": Reading("dcgm", "memory_used_bytes", MIB),
    "DCGM_FI_DEV_FB_FREE": Reading("dcgm", "memory_free_bytes", MIB),
    "DCGM_FI_DEV_FB_RESERVED": Reading("dcgm", "memory_reserved_bytes", MIB),
    "DCGM_FI_DEV_GPU_TEMP": Reading("dcgm", "temperature_celsius"),
    "DCGM_FI_DEV_POWER_USAGE": Reading("dcgm", "power_watts"),
    "gpu_gfx_activity": Reading("amd", "utilization_ratio", 0.01),
    "gpu_used_vram": Reading("amd", "memory_used_bytes", MIB),
    "gpu_total_vram": Reading("amd", "memory_total_bytes", MIB),
    "gpu_package_power": Reading("amd", "power_watts"),
    "gpu_junction_temperature": Reading("amd", "temperature_celsius"),
    "gpudash_device_utilization_ratio": Reading("gpudash", "utilization_ratio"),
    "gpudash_device_memory_used_bytes": Reading("gpudash", "memory_used_bytes"),
    "gpudash_device_memory_total_bytes": Reading("gpudash", "memory_total_bytes"),
    "gpudash_device_temperature_celsius": Reading("gpudash", "temperature_celsius"),
    "gpudash_device_power_watts": Reading("gpudash", "power_watts"),
    "gpudash_mig_memory_used_bytes": Reading("gpudash", "memory_used_bytes"),
    "gpudash_mig_memory_total_bytes": Reading("gpudash", "memory_total_bytes"),
}

# gpudash's batch results change only when someone probes, benchmarks or checks: read them less often.
BATCH = (
    "gpudash_machine_info",
    "gpudash_device_info",
    "gpudash_precision_verified",
    "gpudash_recommendation_info",
    "gpudash_check_results",
)

# What a reading may be once in base units; anything else (NaN, +Inf, a negative wattage, 1e300 bytes from a
# broken or hostile exporter) is dropped as no reading, never shown or passed on in `fleet --json`.
PLAUSIBLE: dict[str, tuple[float, float]] = {
    "utilization_ratio": (0.0, 1.0),
    "memory_used_bytes": (0.0, 2.0**63),
    "memory_total_bytes": (0.0, 2.0**63),
    "memory_free_bytes": (0.0, 2.0**63),
    "memory_reserved_bytes": (0.0, 2.0**63),
    "temperature_celsius": (-273.15, 10_000.0),
    "power_watts": (0.0, 1e7),
}


def plausible(field: str, value: float) -> float | None:
    """`value` when it is a finite reading within `field`'s range, else None."""
    low, high = PLAUSIBLE.get(field, (-math.inf, math.inf))
    return value if math.isfinite(value) and low <= value <= high else None


# gpudash serve's health verdicts (docs/health.md): read every round, they decide whether a host is up. A check
# of the machine itself carries device_key="host", so it has no device identity and lands on the host.
HEALTH = ("gpudash_device_lost", "gpudash_health_check_status")

GPUDASH_LIVE = tuple(n for n, r in LIVE.items() if r.source == "gpudash")
WANTED = frozenset(LIVE) | frozenset(BATCH) | frozenset(HEALTH)


def source_of(name: str) -> str:
    if name.startswith("DCGM_"):
        return "dcgm"
    if name.startswith("gpudash_"):
        return "gpudash"
    return "amd"


def hostname(labels: dict[str, str]) -> str | None:
    """The host a series describes: `hostname`, or dcgm-exporter's older `Hostname`."""
    return labels.get("hostname") or labels.get("Hostname") or None


@dataclass(frozen=True)
class Identity:
    key: str  # what merges one GPU across exporters: its UUID (NVIDIA), else vendor:index
    vendor: str
    index: str
    name: str | None
    uuid: str | None
    instance: str | None = None  # a MIG instance's GPU_I_ID; its GPU is the same key without "/mig..."
    profile: str | None = None  # its GPU_I_PROFILE ("3g.40gb")


def identity(name: str, labels: dict[str, str]) -> Identity | None:
    """The device a sample belongs to, or None for host-level series (gpudash_machine_info)."""
    source = source_of(name)
    if source == "dcgm":
        vendor, index, model = "nvidia", labels.get("gpu"), labels.get("modelName")
    elif source == "amd":
        vendor, index, model = "amd", labels.get("gpu_id"), labels.get("card_model")
    else:
        key = labels.get("device_key")
        if not key or ":" not in key:
            return None
        vendor, index = key.split(":", 1)
        model = labels.get("modelName") or labels.get("card_model") or labels.get("name")
    if index is None:
        return None
    uuid = labels.get("UUID") or None
    merge = uuid if vendor == "nvidia" and uuid else f"{vendor}:{index}"
    instance = labels.get("GPU_I_ID") or None
    if instance is not None:
        return Identity(f"{merge}/mig{instance}", vendor, index, model, uuid, instance, labels.get("GPU_I_PROFILE"))
    return Identity(merge, vendor, index, model, uuid)


@dataclass(frozen=True, eq=False)
class Series:
    """One series as the fleet reads it, with what its name and labels say worked out once: a host sends the
    same series every round, so the parser keeps these by their text (gpudash.fleet.exposition)."""

    name: str
    labels: dict[str, str]
    host: str | None  # hostname(labels)
    device: Identity | None  # identity(name, labels)
    source: str  # source_of(name)
    reading: Reading | None  # LIVE.get(name)


def describe(name: str, labels: dict[str, str]) -> Series:
    return Series(name, labels, hostname(labels), identity(name, labels), source_of(name), LIVE.get(name))
