"""Every health check on a machine: GPU count, each GPU's counters (read by its contained driver child, under
that child's time limit), the kernel log, the host's sysfs counters and the probe's numerics, in device order.

On a replayed machine the counters come from the snapshot (when it recorded them); the kernel log and sysfs are
this host's, not the replayed one's, so those checks are left out there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudash.health import amd, host, kernel_log, numerics, nvidia
from gpudash.health.catalog import CRITICAL, HOST, OK, REBOOT, UNKNOWN, WARN, HealthResult, result
from gpudash.health.thresholds import Thresholds
from gpudash.models import LOST

GPU_VENDORS = ("nvidia", "amd")


def run_health(
    machine: Any,
    limits: Thresholds,
    *,
    devices: list | None = None,
    sys_root: Path = host.SYS,
    whole_machine: bool | None = None,
) -> list[HealthResult]:
    """The results for `devices` (default: every device), then the checks of the whole machine (the GPU count and
    the host's counters) when `whole_machine` (default: when no devices were named: devices the user named get
    their own checks only, nothing they did not name; a preflight rank asks for the node's too)."""
    whole_machine = devices is None if whole_machine is None else whole_machine
    chosen = list(machine.devices) if devices is None else list(devices)
    out: list[HealthResult] = [_count(machine, limits)] if whole_machine else []
    log = None
    if not machine.replayed and any(d.vendor == "nvidia" for d in chosen):
        log = kernel_log.read(limits.kernel_log, limits.xid_window_s)
    for device in chosen:
        if device.vendor in GPU_VENDORS:
            out.extend(_gpu(machine, device, limits, log))
        out.extend(numerics.judge(device, _remembered_probe(machine, device)))
    if whole_machine and not machine.replayed:
        if log is None:
            log = kernel_log.read(limits.kernel_log, limits.xid_window_s)
        out.append(host.edac(limits, sys_root))
        out.append(host.thermal_throttle(sys_root))
        out.append(_pcie_limited(log))
    return out


def _count(machine: Any, limits: Thresholds) -> HealthResult:
    gpus = [d for d in machine.devices + machine.hidden if d.vendor in GPU_VENDORS]
    present = [d for d in gpus if d.status != LOST]
    lost = [d.key for d in gpus if d.status == LOST]
    evidence = {"present": len(present), "expected": limits.expect_gpus or None, "lost": lost}
    if not limits.expect_gpus:
        summary = f"{len(present)} GPUs present" + (f", {len(lost)} lost" if lost else "") + " (no count expected)"
        return result("gpu.count", HOST, CRITICAL if lost else None, summary, evidence)
    if len(present) < limits.expect_gpus:
        summary = f"{len(present)} of {limits.expect_gpus} expected GPUs present" + (
            f"; lost: {', '.join(lost)}" if lost else ""
        )
        return result("gpu.count", HOST, CRITICAL, summary, evidence)
    if len(present) > limits.expect_gpus:
        return result("gpu.count", HOST, WARN, f"{len(present)} GPUs, {limits.expect_gpus} expected", evidence)
    return result("gpu.count", HOST, OK, f"{len(present)} GPUs present as expected", evidence)


def counter_checks(machine: Any, device: Any, limits: Thresholds) -> list[HealthResult]:
    """One GPU's checks from its driver counters alone (reachability included): no kernel log, no sysfs, no
    remembered probe. What `gpudash info` and `gpudash serve` judge a device by, in milliseconds."""
    if device.vendor not in GPU_VENDORS:
        return []
    return _gpu(machine, device, limits, None, kernel=False)


def _gpu(
    machine: Any, device: Any, limits: Thresholds, log: kernel_log.KernelLog | None, kernel: bool = True
) -> list[HealthResult]:
    if device.status == LOST:
        why = device.unavailable.get("device", "unreachable")
        return [result("gpu.lost", device.key, CRITICAL, f"GPU lost: {why}", {"reason": why}, REBOOT, device.uuid)]
    out = []
    if device.vendor == "nvidia":
        out.append(result("gpu.lost", device.key, OK, "the driver reaches the GPU", uuid=device.uuid))
    reader = machine.health_readers.get(device.key)
    if reader is not None:
        raw = _read(reader)
        lost_why = (raw.get("unavailable") or {}).get("device")
        if lost_why:  # fell off the bus since discovery
            return [
                result(
                    "gpu.lost", device.key, CRITICAL, f"GPU lost: {lost_why}", {"reason": lost_why}, REBOOT, device.uuid
                )
            ]
        judge = nvidia.judge if device.vendor == "nvidia" else amd.judge
        out.extend(judge(device.key, device.uuid, raw, limits))
    elif not machine.replayed:
        out.append(result("gpu.lost", device.key, UNKNOWN, "no vendor library reads this GPU's counters"))
    if kernel and device.vendor == "nvidia" and not machine.replayed:
        out.append(_kernel_xids(device, log, limits))
    return out


def _read(reader: Any) -> dict[str, Any]:
    try:
        raw = reader()
    except Exception as exc:  # an in-process adapter (no fork) raising: this GPU's counters are unknown
        return {"counters": {}, "unavailable": {"all": str(exc) or type(exc).__name__}}
    return raw if isinstance(raw, dict) else {"counters": {}, "unavailable": {"all": "no answer"}}


def _kernel_xids(device: Any, log: kernel_log.KernelLog | None, limits: Thresholds) -> HealthResult:
    if log is None or log.reason is not None:
        why = log.reason if log is not None and log.reason is not None else "not read"
        return result("gpu.xid.kernel_log", device.key, UNKNOWN, why, {"reason": why}, uuid=device.uuid)
    mine = [x for x in log.xids if kernel_log.same_gpu(x["pci"], device.pci_bus_id)]
    xids = sorted({x["xid"] for x in mine})
    severity, action = nvidia.xid_action(xids, limits)
    hours = limits.xid_window_s / 3600
    evidence = {
        "xids": xids,
        "count": len(mine),
        "window_s": limits.xid_window_s,
        "lines": [x["line"] for x in mine[-5:]],
    }
    summary = (
        f"XID {', '.join(map(str, xids))} in the kernel log's last {hours:g} h"
        if xids
        else f"no XID in the last {hours:g} h"
    )
    return result("gpu.xid.kernel_log", device.key, severity, summary, evidence, action, device.uuid)


def _pcie_limited(log: kernel_log.KernelLog) -> HealthResult:
    if log.reason is not None:
        return result("host.pcie_limited", HOST, UNKNOWN, log.reason, {"reason": log.reason})
    if log.limited:
        devices = sorted({x["pci"] for x in log.limited})
        summary = f"the kernel says PCIe bandwidth is limited for {', '.join(devices)}"
        return result("host.pcie_limited", HOST, WARN, summary, {"lines": [x["line"] for x in log.limited[-8:]]})
    return result(
        "host.pcie_limited", HOST, OK, "no PCIe 'limited by' message in the kernel log", {"records": log.records}
    )


def _remembered_probe(machine: Any, device: Any) -> Any:
    from gpudash.measure.probe.store import remembered_matrix

    return remembered_matrix(machine, device)
