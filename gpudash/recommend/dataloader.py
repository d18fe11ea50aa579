"""Dataloader rules: worker processes from the CPU cores each device gets, pinned memory where there is a GPU.

GPU: (logical cores / GPUs on the host) - 1 workers, one core staying with the training process, capped at
8 (each worker holds its own copy of the dataset object and more rarely help). CPU training: the model's
kernels already use every core, so small hosts (<= 4 cores) load in the main process and larger ones give
a quarter of the cores, at most 4, to loading.
"""

from __future__ import annotations

from gpudash.models import ESTIMATED, REPLAYED, SPEC
from gpudash.recommend.facts import Facts
from gpudash.recommend.settings import Setting

MAX_WORKERS = 8
UNKNOWN_CORES_WORKERS = 2


def _workers(facts: Facts) -> tuple[int, str, str]:
    cores = facts.host_logical_cores
    prov = REPLAYED if facts.replayed else SPEC
    if facts.is_cpu:
        if not cores:
            return 0, "core count unknown: load in the main process", ESTIMATED
        if cores <= 4:
            return 0, f"CPU training on {cores} logical cores: every core computes, so load in the main process", prov
        n = min(4, cores // 4)
        return n, f"CPU training on {cores} logical cores: a quarter of them (at most 4) load data", prov
    if not cores:
        return (
            UNKNOWN_CORES_WORKERS,
            (
                f"host core count unknown (not in the snapshot): {UNKNOWN_CORES_WORKERS} "
                "workers overlap loading with compute; use cores per GPU - 1 on the real "
                "host"
            ),
            ESTIMATED,
        )
    gpus = max(1, facts.accelerators_on_host)
    per_device = cores // gpus
    n = max(0, min(MAX_WORKERS, per_device - 1))
    capped = f", capped at {MAX_WORKERS}" if per_device - 1 > MAX_WORKERS else ""
    return (
        n,
        (
            f"{cores} logical cores / {gpus} GPU{'s' if gpus > 1 else ''} = {per_device} per device, one kept "
            f"for the training process{capped}"
        ),
        prov,
    )


def dataloader_settings(facts: Facts) -> dict[str, Setting]:
    workers, why, prov = _workers(facts)
    gpu = not facts.is_cpu
    return {
        "num_workers": Setting(workers, why, prov),
        "pin_memory": Setting(
            gpu,
            "pinned host memory makes host-to-GPU copies faster and asynchronous"
            if gpu
            else "no GPU: pinned memory only speeds up copies to a GPU",
            SPEC,
        ),
        "persistent_workers": Setting(
            workers > 0, "keep workers alive between epochs" if workers else "no worker processes", prov
        ),
    }
