"""One rank's own work: which device it trains on, then the probes and checks on it, in child processes.

The device: the GPU torch numbers LOCAL_RANK (or the only GPU this process can see, as with Slurm's
--gpus-per-task), else the CPU when the host has no GPU at all. A host whose GPUs torch cannot see is a
failure, not a quiet fall-back to the CPU. Each precision's probe and each check runs in gpudash's runner with
its own time limit: a device that hangs costs that limit and is reported, the rank still answers the gather.
"""

from __future__ import annotations

import os
import platform
import socket
import time
from collections.abc import Callable
from typing import Any

from gpudash import __version__
from gpudash.knowledge import arch_for
from gpudash.measure.schema import FAILED, SLOW_REFERENCE, VERIFIED
from gpudash.models import DeviceInfo
from gpudash.preflight.launcher import World, node_name

EXPECTED = ("native", "emulated")  # a failure of these is a fault; an absent precision is expected to fail
RATED = ("fp32", "tf32", "bf16", "fp16")  # precisions whose matmul rate and fingerprint each rank measures
# Replaced only by tests/preflight_rank.py (a planted slow rank, a planted bit flip); nothing else sets it.
SPEED_TARGET = "gpudash.preflight.tasks.speed:measure"


def shape_plan(device_key: str) -> tuple[list[list[int]], float]:
    """(shapes, measuring seconds per shape): small and quick, so the whole preflight stays within a minute."""
    if device_key.startswith("cpu"):
        return [[256, 256, 256], [512, 512, 512]], 0.2
    return [[2048, 2048, 2048], [4096, 4096, 4096], [8192, 8192, 8192]], 0.1


def choose_device(machine, local_rank: int, want: str = "auto") -> tuple[DeviceInfo | None, str | None]:
    """(the device this rank checks, why there is none)."""
    cpu = next((d for d in machine.devices if d.vendor == "cpu"), None)
    if want == "cpu":
        return cpu, None if cpu else "no CPU device found"
    gpus = [d for d in machine.devices if d.vendor != "cpu"]
    seen = sorted((d for d in gpus if d.torch_index is not None), key=lambda d: d.torch_index or 0)
    if not gpus:
        return cpu, None if cpu else "no device found"
    if not seen:
        return None, f"{len(gpus)} GPU(s) on this host but torch sees none (a CPU-only torch, or hidden GPUs?)"
    if len(seen) == 1:
        return seen[0], None
    match = next((d for d in seen if d.torch_index == local_rank), None)
    if match is None:
        return None, f"LOCAL_RANK {local_rank} but torch sees {len(seen)} GPUs (cuda:0 to cuda:{len(seen) - 1})"
    return match, None


def _precision_entry(result) -> dict[str, Any]:
    return {
        "spec": result.spec,
        "torch": result.torch,
        "verified": result.verified,
        "verdict": result.verdict,
        "reason": result.failure_reason,
        "max_rel_error": result.max_rel_error,
    }


def prepare(world: World, device_choice: str = "auto") -> tuple[Any, DeviceInfo | None, dict[str, Any]]:
    """Discover the machine and choose this rank's device (no device code yet): (machine, device, result)."""
    from gpudash.devices import discover

    machine = discover(include_torch=True)
    device, device_error = choose_device(machine, world.local_rank, device_choice)
    runtime = machine.runtime
    result: dict[str, Any] = {
        "rank": world.rank,
        "local_rank": world.local_rank,
        "hostname": socket.gethostname(),
        "node": node_name(),  # the within-node all_reduce's grouping (launcher.node_name)
        "pid": os.getpid(),
        "device": None,
        "device_error": device_error,
        "versions": {
            "gpudash": __version__,
            "python": platform.python_version(),
            "torch": runtime.torch,
            "cuda": runtime.cuda,
            "hip": runtime.hip,
            "driver": runtime.driver,
            "nccl": _nccl_version(),
        },
        "speed": {},
        "fingerprints": {},
        "threads": None,
        "speed_window": None,
        "gpu_count": sum(1 for d in machine.devices + machine.hidden if d.vendor in ("nvidia", "amd")),
        "health": [],
        "precisions": {},
        "checks": [],
        "plugin_errors": [],
        "collective": None,
        "notes": list(machine.notes),
    }
    if device is not None:
        result["device"] = {
            "key": device.key,
            "name": device.name,
            "arch": arch_for(device).family,
            "uuid": device.uuid,
            "pci_bus_id": device.pci_bus_id,
            "torch_index": device.torch_index,
            "memory_total_bytes": device.memory_total_bytes,
            "vbios": device.vbios,  # compared among the ranks with the same model (verdict._drift)
        }
    return machine, device, result


def _nccl_version() -> str | None:
    """NCCL's version (RCCL's on ROCm) as torch reports it; torch is loaded by discovery already."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        version = torch.cuda.nccl.version()
        return ".".join(str(v) for v in version) if isinstance(version, tuple) else str(version)
    except Exception:
        return None


def _torch_device(device: DeviceInfo) -> str:
    return "cpu" if device.vendor == "cpu" else f"cuda:{device.torch_index or 0}"


def measure_speed(
    device: DeviceInfo, result: dict[str, Any], timeout_s: float, turn: Callable[[Callable[[], Any]], Any] | None = None
) -> None:
    """Matmul rate and fingerprint of each working precision of RATED, in the runner's child. `turn` runs the
    measurement when no other CPU rank of the host is busy (Job.take_turn); it is called even when nothing is
    measured, since the host's other CPU ranks wait for this rank's turn."""
    from gpudash.measure.runner import Task, run_one

    turn = turn or (lambda measure: measure())
    chosen = [p for p in RATED if p in result["precisions"] and works(result["precisions"][p])]
    if not chosen:
        turn(lambda: None)
        return
    shapes, measure_s = shape_plan(device.key)
    task = Task(SPEED_TARGET, {"device": _torch_device(device), "precisions": chosen, "shapes": shapes,
                               "measure_s": measure_s, "case_budget_s": 2.0}, timeout_s=timeout_s)  # fmt: skip
    done = turn(lambda: run_one(task))
    if done is None:  # the launcher is stopping the job: this rank's turn never came
        return
    if done.ok and isinstance(done.value, dict):
        result["speed"] = done.value["rates"]
        result["fingerprints"] = done.value["fingerprints"]
        result["threads"] = done.value["threads"]
        result["speed_window"] = done.value.get("window")
    else:
        why = f"{done.status}: {done.error}"
        result["speed"] = {p: {"gflops": None, "shape": None, "contended": False, "error": why} for p in chosen}
        result["fingerprints"] = {p: {"sha256": None, "error": why} for p in chosen}


def health_of(machine, device: DeviceInfo | None, health_config, expect_gpus: int | None) -> list[dict[str, Any]]:
    """gpudash's health checks on this rank's device and host (gpu.count against --expect-gpus)."""
    from gpudash.health.contract import health_entry
    from gpudash.health.run import run_health
    from gpudash.health.thresholds import Thresholds

    limits = Thresholds.from_config(health_config, expect_gpus)
    chosen = [device] if device is not None and device.vendor != "cpu" else []
    found = run_health(machine, limits, devices=chosen, whole_machine=True)  # the node's GPU count too
    return [health_entry(h) for h in found if h.severity is not None]


def check_device(
    machine,
    device: DeviceInfo | None,
    result: dict[str, Any],
    *,
    precisions: list[str] | None = None,
    timeout_s: float = 120.0,
    checks: bool = True,
    plugin_dirs=(),
    speed: bool = True,
    health_config=None,
    plugin_limits=None,
    expect_gpus: int | None = None,
    stop=None,
    turn=None,
) -> None:
    """Probe and check the device, each task in the child-process runner with `timeout_s`; fills `result`."""
    from gpudash.measure import probe
    from gpudash.plugin_manager import make_plugin_manager, run_checks

    started = time.monotonic()
    if device is not None:
        matrices = probe.probe_machine(
            machine, devices=[device], timeout_s=timeout_s, precisions=precisions, cancel=stop
        )
        matrix = matrices.get(device.key)
        if matrix is not None:
            result["precisions"] = {p: _precision_entry(r) for p, r in matrix.results.items()}
        if speed and not (stop and stop.is_set()):
            measure_speed(device, result, timeout_s, turn)
        if checks and not (stop and stop.is_set()):
            pm = make_plugin_manager(list(plugin_dirs), on_error=None)
            if plugin_limits is not None:
                pm.limits = plugin_limits  # the user's [plugins] limits for the checks' children
            result["checks"] = [
                {"plugin": c.plugin, "check": c.check, "status": c.status, "summary": c.summary}
                for c in run_checks(machine, pm, timeout_s=timeout_s, devices=[device], on_error=None)
            ]
            result["plugin_errors"] = [f"{r.name}: {'; '.join(r.errors)}" for r in pm.records.values() if r.errors]
    if not (stop and stop.is_set()):  # `stop`: the launcher is ending the job (SIGTERM): no new child process
        result["health"] = health_of(machine, device, health_config, expect_gpus)
    result["seconds"] = round(time.monotonic() - started, 2)


def works(entry: dict[str, Any]) -> bool | None:
    """Whether a precision ran correctly (None: not run, so no evidence either way)."""
    if entry["verdict"] in (VERIFIED, SLOW_REFERENCE):
        return True
    if entry["verdict"] == FAILED:
        return False
    return None
