"""Opt-in series joining each GPU to the Slurm job or Kubernetes pod whose processes hold it (`gpudash serve
--job-labels`, config serve.job_labels), with the number of series bounded (serve.max_job_series).

One series per (device, job) pair in each family, never per pid: a pid changes at every restart, a job does
not. The job labels are dcgm-exporter's where it has them (`hpc_job` from its HPC job mapping; `pod`,
`namespace` from its Kubernetes mapping) and AMD device-metrics-exporter's for the rest (`job_user`,
`job_partition`). dcgm-exporter's `container` is the container's name, which only the kubelet knows;
gpudash reads the runtime's container ID from the cgroup and writes it as `container_id`, never as
`container`. What /proc did not say is left out (gpudash.devices.job_attribution says what is readable).
Processes of no job have no series here; gpudash_device_processes counts every process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudash.exporter.family import Family
from gpudash.exporter.scrape import Scrape
from gpudash.models import JobAttribution

LABEL_MAX = 253  # the longest Kubernetes object name; a longer value read from an environment is left out


@dataclass
class _Pair:
    labels: dict[str, str]
    processes: int = 0
    memory_bytes: int | None = None
    pids: set[int] = field(default_factory=set)


def job_key(job: JobAttribution) -> tuple[str, ...]:
    """What tells two jobs apart: a Slurm job's ID (its steps are one job), a pod's UID and container."""
    if job.scheduler == "slurm":
        return ("slurm", job.job_id or "")
    return ("kubernetes", job.pod_uid or f"{job.namespace}/{job.pod}", job.container_id or "")


def job_labels(job: JobAttribution) -> dict[str, str]:
    if job.scheduler == "slurm":
        found = {"hpc_job": job.job_id, "job_user": job.user, "job_partition": job.partition}
    else:
        found = {"pod": job.pod, "namespace": job.namespace, "pod_uid": job.pod_uid, "container_id": job.container_id}
    labels = {"scheduler": job.scheduler}
    labels |= {k: v for k, v in found.items() if v and len(v) <= LABEL_MAX}
    return labels


def pairs(scrape: Scrape) -> list[_Pair]:
    """Each (device, job) pair of this reading, in device order, then job order (stable between scrapes)."""
    found: list[_Pair] = []
    for device in scrape.devices:
        if device.vendor == "cpu":
            continue
        by_job: dict[tuple[str, ...], _Pair] = {}
        for proc in scrape.sample(device).processes or []:
            if proc.job is None:
                continue
            pair = by_job.setdefault(job_key(proc.job), _Pair(scrape.with_labels(device, **job_labels(proc.job))))
            for name, value in job_labels(proc.job).items():  # one process's environment may say more
                pair.labels.setdefault(name, value)
            if proc.pid in pair.pids:  # NVML lists a process once per context type; count it once
                continue
            pair.pids.add(proc.pid)
            pair.processes += 1
            if proc.memory_used_bytes is not None:
                pair.memory_bytes = (pair.memory_bytes or 0) + proc.memory_used_bytes
        found += [by_job[k] for k in sorted(by_job)]
    return found


def families(scrape: Scrape, max_series: int) -> list[Family]:
    processes = Family(
        "gpudash_job_gpu_processes",
        "Processes of the Slurm job (hpc_job) or Kubernetes pod on the device (opt-in: serve --job-labels)",
    )
    memory = Family("gpudash_job_gpu_memory_bytes", "GPU memory the job's or pod's processes use on the device, bytes")
    dropped = Family(
        "gpudash_job_series_dropped",
        "Device-job pairs left out of this scrape's gpudash_job_gpu_* series: beyond serve.max_job_series",
    )
    found = pairs(scrape) if scrape.devices else []
    for pair in found[:max_series]:
        processes.add(pair.labels, pair.processes)
        memory.add(pair.labels, pair.memory_bytes)
    if scrape.devices:
        dropped.add({"hostname": scrape.hostname}, max(0, len(found) - max_series))
    return [processes, memory, dropped]
