"""The series the fleet reads from each exporter, their units, and how they identify a device and a host.

dcgm-exporter (NVIDIA, etc/default-counters.csv): utilisation in %, framebuffer in MiB, temperature in C,
power in W; devices by `gpu` (NVML index) and `UUID`; the host as `Hostname` (newer releases: `hostname`).
AMD device-metrics-exporter: gfx activity in %, VRAM in MB as amdsmi counts them (MiB), power in W,
junction temperature in C; devices by `gpu_id`; the host as `hostname`. gpudash serve: base units already,
plus what only gpudash knows (verified precisions, the recommended dtype, failed checks, health verdicts).
nvitop-exporter and all-smi: their names and labels are beside their entries in LIVE.
A GPU that two exporters describe becomes one device: NVIDIA GPUs meet on UUID, AMD GPUs on gpu_id.
A MIG instance (dcgm-exporter's and gpudash's `GPU_I_ID`, `GPU_I_PROFILE` beside the parent GPU's labels) is a
device of its own under its GPU, keyed by the GPU and GPU_I_ID: never merged into the GPU, where the last line
would win.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIB = 2**20
NVITOP, ALL_SMI = "nvitop", "all-smi"


@dataclass(frozen=True)
class Reading:
    source: str  # "dcgm" | "amd" | "gpudash" | "nvitop" | "all-smi"
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
    # nvitop-exporter (XuehaiPan/nvitop, nvitop-exporter/nvitop_exporter/exporter.py): prometheus_client gauges
    # whose unit is appended to the name; % and MiB; devices by `index` ("0", or "0:1" for a MIG device) and
    # `uuid`, the model as `devicename`, the host as `hostname`.
    "gpu_utilization_Percentage": Reading(NVITOP, "utilization_ratio", 0.01),
    "gpu_memory_used_MiB": Reading(NVITOP, "memory_used_bytes", MIB),
    "gpu_memory_total_MiB": Reading(NVITOP, "memory_total_bytes", MIB),
    "gpu_temperature_C": Reading(NVITOP, "temperature_celsius"),
    "gpu_power_usage_W": Reading(NVITOP, "power_watts"),
    # all-smi (lablup/all-smi, src/api/metrics/gpu.rs): % and bytes; devices by `gpu_index` and `gpu_uuid`, the
    # model as `gpu`, the host as `instance` (which Prometheus renames `exported_instance` when it scrapes).
    "all_smi_gpu_utilization": Reading(ALL_SMI, "utilization_ratio", 0.01),
    "all_smi_gpu_memory_used_bytes": Reading(ALL_SMI, "memory_used_bytes"),
    "all_smi_gpu_memory_total_bytes": Reading(ALL_SMI, "memory_total_bytes"),
    "all_smi_gpu_temperature_celsius": Reading(ALL_SMI, "temperature_celsius"),
    "all_smi_gpu_power_consumption_watts": Reading(ALL_SMI, "power_watts"),
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
# The memory of bad GPUs: series only for GPUs that failed a check before, present on the host or not any more.
FAILED_BEFORE = ("gpudash_health_failed_before_timestamp_seconds", "gpudash_health_failed_before_sightings")
HEALTH = (
    "gpudash_device_lost",
    "gpudash_health_check_status",
    "gpudash_health_timestamp_seconds",
    *FAILED_BEFORE,
)

# GPU memory by user and job, where an exporter labels it (gpudash serve --job-labels, nvitop-exporter's and
# all-smi's per-process series): summed per user and per job (gpudash.fleet.totals), never turned into devices.
USAGE: dict[str, tuple[str, float]] = {  # name -> (source, scale to bytes)
    "gpudash_job_gpu_memory_bytes": ("gpudash", 1.0),
    "process_gpu_memory_MiB": (NVITOP, MIB),
    "all_smi_process_memory_used_bytes": (ALL_SMI, 1.0),
}
# Host facts for the drift view: nvitop-exporter's driver and CUDA versions (gpudash's are in gpudash_machine_info).
HOST_INFO = ("nvitop_info",)

GPUDASH_LIVE = tuple(n for n, r in LIVE.items() if r.source == "gpudash")
WANTED = frozenset(LIVE) | frozenset(BATCH) | frozenset(HEALTH) | frozenset(USAGE) | frozenset(HOST_INFO)


def source_of(name: str) -> str:
    reading = LIVE.get(name)
    if reading is not None:
        return reading.source
    if name in USAGE:
        return USAGE[name][0]
    if name == "nvitop_info":
        return NVITOP
    if name.startswith("DCGM_"):
        return "dcgm"
    if name.startswith("gpudash_"):
        return "gpudash"
    return "amd"


def hostname(labels: dict[str, str], source: str | None = None) -> str | None:
    """The host a series describes: `hostname`, or dcgm-exporter's older `Hostname`; all-smi's `instance`
    (`exported_instance` once Prometheus has put the target's address in `instance`)."""
    if source == ALL_SMI:
        return labels.get("exported_instance") or labels.get("instance") or None
    return labels.get("hostname") or labels.get("Hostname") or None


def _vendor_of(model: str | None) -> str:
    """all-smi describes any accelerator (NVIDIA, AMD, Apple, NPUs): the vendor from the model's name."""
    text = (model or "").lower()
    if "nvidia" in text or text.startswith(("tesla", "quadro", "geforce")):
        return "nvidia"
    if "amd" in text or "instinct" in text or "radeon" in text:
        return "amd"
    return "gpu"


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
    instance: str | None = labels.get("GPU_I_ID") or None
    if source == "dcgm":
        vendor, index, model = "nvidia", labels.get("gpu"), labels.get("modelName")
    elif source == NVITOP:
        vendor, index, model = "nvidia", labels.get("index"), labels.get("devicename")
        if index and ":" in index:  # nvitop's MIG device: "GPU:MIG index"
            index, instance = index.split(":", 1)
    elif source == ALL_SMI:
        model = labels.get("gpu")
        vendor, index = _vendor_of(model), labels.get("gpu_index") or labels.get("index")
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
    uuid = labels.get("UUID") or labels.get("uuid") or labels.get("gpu_uuid") or None
    merge = uuid if vendor == "nvidia" and uuid else f"{vendor}:{index}"
    if instance is not None:
        return Identity(f"{merge}/mig{instance}", vendor, index, model, uuid, instance, labels.get("GPU_I_PROFILE"))
    return Identity(merge, vendor, index, model, uuid)


@dataclass(frozen=True, eq=False)
class Series:
    """One series as the fleet reads it, with what its name and labels say worked out once: a host sends the
    same series every round, so the parser keeps these by their text (gpudash.fleet.exposition)."""

    name: str
    labels: dict[str, str]
    host: str | None  # hostname(labels, source)
    device: Identity | None  # identity(name, labels)
    source: str  # source_of(name)
    reading: Reading | None  # LIVE.get(name)


def describe(name: str, labels: dict[str, str]) -> Series:
    source = source_of(name)
    return Series(name, labels, hostname(labels, source), identity(name, labels), source, LIVE.get(name))
