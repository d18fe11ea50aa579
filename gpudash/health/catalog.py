"""The health catalog: every check's stable ID, what it looks at and the action it recommends when it fails.

IDs are a contract (Slurm scripts, alert rules and the memory of bad GPUs match on them): an ID is never
renamed or reused; a retired check keeps its line in docs/health.md, marked retired.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

OK, WARN, CRITICAL, UNKNOWN = "OK", "WARN", "CRITICAL", "UNKNOWN"
SEVERITIES = (OK, WARN, CRITICAL, UNKNOWN)
# The worst result decides, in this order (gcm and Nagios read it so).
_RANK = {CRITICAL: 3, WARN: 2, UNKNOWN: 1, OK: 0}
# Nagios plugin exit codes (also gcm's health_checks): OK 0, WARNING 1, CRITICAL 2, UNKNOWN 3.
NAGIOS_CODES = {OK: 0, WARN: 1, CRITICAL: 2, UNKNOWN: 3}

# Recommended actions, the rungs of NVIDIA's recovery ladder (drain -> reset_gpu -> restart_os -> service).
NONE, RESET_GPU, REBOOT, DRAIN, SERVICE = "none", "reset_gpu", "reboot", "drain", "service"
ACTIONS = (NONE, RESET_GPU, REBOOT, DRAIN, SERVICE)
HOST = "host"  # the device of checks that concern the whole machine


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    action: str  # recommended when the check fails (a result may name a more specific one)


_SPECS = (
    CheckSpec("gpu.count", "GPUs present against the number expected", REBOOT),
    CheckSpec("gpu.lost", "the driver can still reach the GPU", REBOOT),
    CheckSpec("gpu.xid.events", "XID errors the driver reported while gpudash ran (NVML events)", DRAIN),
    CheckSpec("gpu.xid.kernel_log", "XID errors in the kernel log's recent window (NVRM: Xid)", DRAIN),
    CheckSpec("gpu.ecc.sram_uncorrected", "volatile uncorrected SRAM ECC errors", RESET_GPU),
    CheckSpec("gpu.ecc.sram_corrected", "volatile corrected SRAM ECC errors against the limit", DRAIN),
    CheckSpec("gpu.ecc.sram_aggregate_uncorrected", "lifetime uncorrected SRAM ECC errors against the limit", SERVICE),
    CheckSpec("gpu.ecc.dram_uncorrected", "volatile uncorrected DRAM ECC errors", RESET_GPU),
    CheckSpec("gpu.ecc.dram_corrected", "volatile corrected DRAM ECC errors against the limit", DRAIN),
    CheckSpec("gpu.retired_pages", "retired memory pages: pending retirement", RESET_GPU),
    CheckSpec("gpu.row_remap", "row remapping: pending, failed, uncorrected rows against the limit", RESET_GPU),
    CheckSpec("gpu.recovery_action", "the recovery action the driver asks for", RESET_GPU),
    CheckSpec("gpu.clock_events", "clock-event (throttle) reasons: hardware slowdown, thermal, power brake", SERVICE),
    CheckSpec("gpu.pcie.width", "PCIe link width against the device's maximum", REBOOT),
    CheckSpec("gpu.pcie.gen", "PCIe link generation against the device's maximum (under load)", REBOOT),
    CheckSpec("gpu.nvlink.down", "NVLink links inactive", RESET_GPU),
    CheckSpec("gpu.nvlink.errors", "NVLink replay, recovery and CRC error counters", DRAIN),
    CheckSpec("gpu.persistence", "persistence mode enabled", NONE),
    CheckSpec("gpu.power_limit", "power limit not below the default", NONE),
    CheckSpec("gpu.temperature", "temperature against the slowdown threshold", SERVICE),
    CheckSpec("amd.ecc", "ECC/RAS counts per block", RESET_GPU),
    CheckSpec("amd.bad_pages", "retired (bad) memory pages", SERVICE),
    CheckSpec("amd.violations", "thermal and power violation (throttle) flags", SERVICE),
    CheckSpec("amd.pcie", "PCIe link width and speed against the maximum", REBOOT),
    CheckSpec("amd.xgmi", "XGMI links down", RESET_GPU),
    CheckSpec("amd.partition", "compute and memory partition modes against the expected", NONE),
    CheckSpec("host.edac", "memory errors counted by the EDAC memory controllers", SERVICE),
    CheckSpec("host.thermal_throttle", "CPU thermal-throttle events since boot", SERVICE),
    CheckSpec("host.pcie_limited", "the kernel's PCIe 'limited by' bandwidth messages", REBOOT),
    CheckSpec("numerics.precision", "each precision the spec says the device has, verified by gpudash probe", DRAIN),
    # gpudash preflight: one rank of a distributed job against its peers (docs/fleet.md)
    CheckSpec("preflight.setup", "the rank has a device of its own (none, or a GPU two ranks share)", NONE),
    CheckSpec("preflight.check", "a plugin check on the rank's device", DRAIN),
    CheckSpec("preflight.collective", "an all_reduce over every rank sums right on the training backend", DRAIN),
    CheckSpec(
        "preflight.drift",
        "driver, CUDA/HIP, torch, NCCL/RCCL, gpudash versions, VBIOS and health like the peers'",
        DRAIN,
    ),
    CheckSpec("preflight.speed", "matmul rate per precision against same-model peers and the published MAMF", DRAIN),
    CheckSpec("preflight.fingerprint", "a fixed matmul chain gives the same bits as same-model peers", DRAIN),
    CheckSpec("preflight.busbw", "all_reduce bus bandwidth against the other nodes and published floors", DRAIN),
    CheckSpec("preflight.lost", "the rank joined and answered until the verdict", DRAIN),
)
CATALOG: dict[str, CheckSpec] = {spec.id: spec for spec in _SPECS}


@dataclass
class HealthResult:
    """One check on one device (or HOST). severity None: the check does not apply there (no such counter)."""

    id: str
    device: str
    severity: str | None
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    action: str = NONE  # what to do about it; none when OK, UNKNOWN or not applicable
    uuid: str | None = None  # the GPU's, so a failure is remembered against the board, not its index

    def __post_init__(self) -> None:
        if self.id not in CATALOG:
            raise ValueError(f"unknown health check id {self.id!r}")
        if self.severity is not None and self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} is not one of {', '.join(SEVERITIES)}")
        if self.action not in ACTIONS:
            raise ValueError(f"action {self.action!r} is not one of {', '.join(ACTIONS)}")

    @property
    def failed(self) -> bool:
        return self.severity in (WARN, CRITICAL)


def result(
    check_id: str,
    device: str,
    severity: str | None,
    summary: str,
    evidence: dict[str, Any] | None = None,
    action: str | None = None,
    uuid: str | None = None,
) -> HealthResult:
    """A result; a failure (WARN, CRITICAL) takes the catalog's action unless one is named, others take none."""
    if action is None:
        action = CATALOG[check_id].action if severity in (WARN, CRITICAL) else NONE
    return HealthResult(check_id, device, severity, summary, dict(evidence or {}), action, uuid)


def worst(severities: Iterable[str | None]) -> str | None:
    """CRITICAL over WARN over UNKNOWN over OK; None when nothing applied."""
    found = [s for s in severities if s is not None]
    return max(found, key=_RANK.__getitem__) if found else None
