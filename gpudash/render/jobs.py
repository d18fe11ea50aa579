"""`gpudash info`'s lines naming the Slurm jobs and Kubernetes pods that hold GPUs: one line per job, its
devices and pids, with only what /proc said (gpudash.devices.job_attribution)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudash.render.formatting import key_ranges


def job_label(job: dict[str, Any]) -> str:
    """ "slurm job 12345 (user alice, partition gpu)", "k8s pod ns/name (uid 3f5a…, container 0123456789ab)"."""
    if job.get("scheduler") == "slurm":
        known = [f"{k} {job[k]}" for k in ("user", "partition") if job.get(k)]
        return f"slurm job {job.get('job_id') or '?'}" + (f" ({', '.join(known)})" if known else "")
    name = f"{job['namespace']}/{job['pod']}" if job.get("namespace") and job.get("pod") else job.get("pod")
    known = [f"uid {job['pod_uid']}"] if job.get("pod_uid") else []
    if job.get("container_id"):
        known.append(f"container {job['container_id'][:12]}")
    return f"k8s pod {name or '(name not readable: no POD_NAME)'}" + (f" ({', '.join(known)})" if known else "")


def job_lines(devices: list[dict[str, Any]], style: Callable[..., str] | None = None) -> list[str]:
    """One line per job holding a GPU: its label, the devices (folded) and the pids."""
    found: dict[str, tuple[list[dict[str, Any]], set[int]]] = {}
    for dev in devices:
        sample = dev.get("sample") or {}
        for proc in sample.get("processes") or []:
            job = proc.get("job")
            if not job:
                continue
            devs, pids = found.setdefault(job_label(job), ([], set()))
            if dev not in devs:
                devs.append(dev)
            pids.add(proc["pid"])
    head = style("job", "2") if style else "job"
    return [
        f"{head}: {label} on {key_ranges(devs)} · pid {', '.join(str(p) for p in sorted(pids))}"
        for label, (devs, pids) in found.items()
    ]
