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
from typing import Any

from gpudash import __version__
from gpudash.knowledge import arch_for
from gpudash.measure.schema import FAILED, SLOW_REFERENCE, VERIFIED
from gpudash.models import DeviceInfo
from gpudash.preflight.launcher import World

EXPECTED = ("native", "emulated")  # a failure of these is a fault; an absent precision is expected to fail


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


def problems_of(result: dict[str, Any]) -> list[str]:
    """This rank's own faults (differences from other ranks are added by the verdict)."""
    out = []
    if result["device"] is None:
        out.append(f"no device: {result['device_error']}")
    for precision, p in result["precisions"].items():
        if p["verdict"] == FAILED and (p["spec"] in EXPECTED or p["torch"] is True):
            out.append(f"{precision} failed ({p['spec'] or 'no spec'}): {p['reason']}")
    for c in result["checks"]:
        if c["status"] in ("fail", "error"):
            out.append(f"check {c['plugin']}/{c['check']} {c['status']}: {c['summary']}")
    collective = result.get("collective")
    if collective and not collective["ok"]:
        out.append(f"{collective['backend']} all_reduce failed: {collective['error']}")
    return out


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
        },
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
        }
    return machine, device, result


def check_device(
    machine,
    device: DeviceInfo | None,
    result: dict[str, Any],
    *,
    precisions: list[str] | None = None,
    timeout_s: float = 120.0,
    checks: bool = True,
    plugin_dirs=(),
) -> None:
    """Probe and check the device, each task in the child-process runner with `timeout_s`; fills `result`."""
    from gpudash.measure import probe
    from gpudash.plugin_manager import make_plugin_manager, run_checks

    started = time.monotonic()
    if device is not None:
        matrices = probe.probe_machine(machine, devices=[device], timeout_s=timeout_s, precisions=precisions)
        matrix = matrices.get(device.key)
        if matrix is not None:
            result["precisions"] = {p: _precision_entry(r) for p, r in matrix.results.items()}
        if checks:
            pm = make_plugin_manager(list(plugin_dirs), on_error=None)
            result["checks"] = [
                {"plugin": c.plugin, "check": c.check, "status": c.status, "summary": c.summary}
                for c in run_checks(machine, pm, timeout_s=timeout_s, devices=[device], on_error=None)
            ]
            result["plugin_errors"] = [f"{r.name}: {'; '.join(r.errors)}" for r in pm.records.values() if r.errors]
    result["seconds"] = round(time.monotonic() - started, 2)


def works(entry: dict[str, Any]) -> bool | None:
    """Whether a precision ran correctly (None: not run, so no evidence either way)."""
    if entry["verdict"] in (VERIFIED, SLOW_REFERENCE):
        return True
    if entry["verdict"] == FAILED:
        return False
    return None
