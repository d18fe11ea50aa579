"""MIG instances and AMD compute partitions, labelled the way the vendors' exporters label them.

dcgm-exporter writes a MIG instance's series with its parent GPU's `gpu`, `UUID`, `pci_bus_id` and
`modelName`, plus `GPU_I_ID` (the GPU instance id) and `GPU_I_PROFILE` (the profile, "3g.40gb"); see its
template (NVIDIA/dcgm-exporter, `{{if $metric.MigProfile}},GPU_I_PROFILE=...,GPU_I_ID=...{{end}}`). gpudash
does the same, in families of their own (`gpudash_mig_*`), so `sum(gpudash_device_memory_used_bytes)` never
counts a GPU's memory twice, and `on (UUID, GPU_I_ID)` joins them with DCGM_FI_DEV_FB_USED.

AMD's device-metrics-exporter labels every series of a partitioned GPU with `gpu_compute_partition_type`
(SPX, DPX, TPX, QPX, CPX) and `gpu_memory_partition_type` (NPS1, NPS4, ...); amdsmi lists each compute
partition as its own device, so gpudash's devices already are the partitions, and
`gpudash_device_partition_info` carries those two labels from amdsmi's answer (read with the health counters).
"""

from __future__ import annotations

from gpudash.exporter.family import Family, info
from gpudash.exporter.health_cache import HealthReading
from gpudash.exporter.scrape import Scrape
from gpudash.models import MigInstance


def mig_profile(instance: MigInstance) -> str:
    """'3g.40gb' from NVML's name 'NVIDIA H100 80GB HBM3 MIG 3g.40gb' (dcgm-exporter's GPU_I_PROFILE); '' if
    the name has no profile."""
    name = instance.name or ""
    _, found, profile = name.rpartition("MIG ")
    return profile.strip() if found else ""


def mig_labels(base: dict[str, str], instance: MigInstance) -> dict[str, str]:
    labels = dict(base)
    if instance.gpu_instance_id is not None:
        labels["GPU_I_ID"] = str(instance.gpu_instance_id)
    else:  # an instance NVML gave no id: its MIG device index keeps its series apart
        labels["mig_index"] = str(instance.index)
    profile = mig_profile(instance)
    if profile:
        labels["GPU_I_PROFILE"] = profile
    return labels


def mig_families(scrape: Scrape) -> list[Family]:
    instances = info(
        "gpudash_mig_instance_info",
        "A MIG instance of the GPU (value 1): dcgm-exporter's GPU_I_ID and GPU_I_PROFILE, its MIG UUID",
    )
    used = Family("gpudash_mig_memory_used_bytes", "Memory in use on the MIG instance, bytes")
    total = Family("gpudash_mig_memory_total_bytes", "Memory of the MIG instance, bytes")
    sms = Family("gpudash_mig_multiprocessors", "Streaming multiprocessors of the MIG instance")
    for device in scrape.devices:
        if device.vendor != "nvidia":
            continue
        sample = scrape.sample(device)  # the reading telemetry took, not a second one
        for instance in sample.mig_instances or []:
            labels = mig_labels(scrape.with_labels(device), instance)
            extra = {"mig_uuid": instance.uuid or "", "compute_instance_id": instance.compute_instance_id}
            instances.add({**labels, **{k: str(v) for k, v in extra.items() if v not in (None, "")}}, 1)
            used.add(labels, instance.memory_used_bytes)
            total.add(labels, instance.memory_total_bytes)
            sms.add(labels, instance.multiprocessors)
    return [instances, used, total, sms]


def partition_families(scrape: Scrape, reading: HealthReading) -> list[Family]:
    partition = info(
        "gpudash_device_partition_info",
        "The AMD GPU's compute and memory partition mode (value 1), labelled as AMD's device-metrics-exporter does",
    )
    devices = {d.key: d for d in scrape.devices}
    for key, raw in reading.counters.items():
        device = devices.get(key)
        found = ((raw.get("counters") or {}).get("partition") or {}) if device is not None else {}
        if device is None or not found:
            continue
        labels = scrape.with_labels(device)
        compute, memory = found.get("compute"), found.get("memory")
        if compute:
            labels["gpu_compute_partition_type"] = str(compute)
        if memory:
            labels["gpu_memory_partition_type"] = str(memory)
        if compute or memory:
            partition.add(labels, 1)
    return [partition]
