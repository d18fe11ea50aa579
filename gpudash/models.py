"""Plain data that flows from the adapters up to the outputs.

Adapters fill these; nothing here knows about drivers, torch or Textual. A field a driver could not
give stays None and its reason goes into `unavailable`: n/a with a reason, never a crash.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

VENDORS = ("nvidia", "amd", "cpu")

# Where a figure came from: every output labels its figures with one of these.
MEASURED, SPEC, REPLAYED, ESTIMATED = "measured", "spec", "replayed", "estimated"

# Why nothing was measured on a replayed machine, worded the same in every output.
NOT_RUN_REPLAYED = "not run: replayed"


def now_iso() -> str:
    """Local time with its offset, the form every gpudash timestamp takes (2026-11-22T00:53:47+0000)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# What a device-level status can be: "lost" when the driver can no longer reach the GPU (NVML's
# GpuIsLost, or a handle lookup failing after enumeration); the driver's reason is unavailable["device"].
OK, LOST = "ok", "lost"

# Process types as nvidia-smi and nvitop print them: compute, graphics, or both.
COMPUTE, GRAPHICS, COMPUTE_AND_GRAPHICS = "C", "G", "C+G"


@dataclass
class JobAttribution:
    """The Slurm job or Kubernetes pod a process belongs to (gpudash.devices.job_attribution says what is
    readable from where); None where nothing says."""

    scheduler: str  # "slurm" or "kubernetes"
    job_id: str | None = None  # Slurm
    step: str | None = None  # Slurm: "0", "batch", "extern"
    user: str | None = None  # Slurm: the job's user
    partition: str | None = None  # Slurm: from SLURM_JOB_PARTITION only
    pod_uid: str | None = None  # Kubernetes: from the kubelet's cgroup path
    pod: str | None = None  # Kubernetes: from the Downward API's POD_NAME only
    namespace: str | None = None  # Kubernetes: from POD_NAMESPACE only
    container_id: str | None = None  # Kubernetes: the runtime's container ID, from the cgroup path
    sources: list[str] = field(default_factory=list)  # "cgroup", "environment"


# A GPU process's host fields (user, command, CPU%...) say this where the host cannot see its pid
# (gpudash.devices.host_processes, in the drivers' children); the process list counts such pids by it.
PROCESS_NOT_VISIBLE = "no such process here (it exited, or is a host pid seen from a container)"


@dataclass
class ProcessUsage:
    """One process on one GPU: the driver's fields plus what the host says about the same pid.

    A process the host cannot see (it exited, or a host pid seen from inside a container) keeps its
    driver fields; its host fields stay None with the reason in `unavailable`.
    """

    pid: int
    name: str | None = None
    memory_used_bytes: int | None = None  # GPU memory
    type: str | None = None  # "C", "G" or "C+G" (NVIDIA); None where the driver does not tell
    user: str | None = None
    command: str | None = None  # the full command line
    utilization_pct: float | None = None  # NVIDIA: SM share (smUtil); AMD: GFX engine busy share
    memory_utilization_pct: float | None = None  # NVIDIA: memory-controller share (memUtil)
    encoder_utilization_pct: float | None = None
    decoder_utilization_pct: float | None = None
    cpu_pct: float | None = None  # of one core, like top: a busy 4-thread process can show 400
    host_memory_bytes: int | None = None  # resident set size (RSS)
    elapsed_s: float | None = None  # since the process started
    gpu_instance_id: int | None = None  # MIG only
    compute_instance_id: int | None = None  # MIG only
    job: JobAttribution | None = None  # its Slurm job or Kubernetes pod, where readable
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> reason


@dataclass
class MigInstance:
    """One MIG device (a GPU instance with its compute instance) on a MIG-enabled GPU."""

    index: int  # the MIG device index on its parent GPU
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    name: str | None = None  # "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
    uuid: str | None = None  # "MIG-..."
    multiprocessors: int | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    processes: list[ProcessUsage] | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass
class DeviceInfo:
    """What a device is: fixed for the life of the process."""

    vendor: str
    index: int
    name: str
    uuid: str | None = None
    pci_bus_id: str | None = None
    compute_capability: str | None = None  # "9.0" (NVIDIA only)
    gfx_target: str | None = None  # "gfx942" (AMD only)
    memory_total_bytes: int | None = None
    driver_version: str | None = None
    multiprocessors: int | None = None  # SMs (NVIDIA) or CUs (AMD); physical cores for the CPU
    max_clock_mhz: int | None = None
    torch_index: int | None = None  # the torch.cuda ordinal, which may differ from the vendor index
    cpu_features: list[str] = field(default_factory=list)  # CPU only: precision-relevant ISA flags
    logical_cores: int | None = None  # CPU only
    sources: list[str] = field(default_factory=list)  # "nvml", "amdsmi", "torch", "cpu", "replay"
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> reason
    extra: dict[str, Any] = field(default_factory=dict)  # anything else worth showing (torch's view)
    status: str = OK  # OK or LOST (then unavailable["device"] holds the driver's reason)
    # AMD only: the GPU's partition modes, AMD's counterpart of MIG (gpudash.devices.amd_partition)
    compute_partition: str | None = None  # "SPX", "DPX", "TPX", "QPX", "CPX"
    memory_partition: str | None = None  # "NPS1", "NPS2", "NPS4", "NPS8"
    # The GPU's video BIOS version (NVML's nvmlDeviceGetVbiosVersion, amdsmi_get_gpu_vbios_info's "version");
    # None where the driver does not say (NotSupported, an older binding): not a fault, so no reason is kept.
    vbios: str | None = None

    @property
    def key(self) -> str:
        """Stable identity across samples: vendor and index."""
        return f"{self.vendor}:{self.index}"


@dataclass
class Sample:
    """Live telemetry of one device at one moment."""

    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    utilization_pct: float | None = None
    memory_utilization_pct: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    processes: list[ProcessUsage] | None = None
    timestamp: float | None = None
    unavailable: dict[str, str] = field(default_factory=dict)
    fan_speed_pct: float | None = None
    encoder_utilization_pct: float | None = None
    decoder_utilization_pct: float | None = None
    performance_state: str | None = None  # "P0" (fastest) .. "P15"
    persistence_mode: str | None = None  # "enabled" / "disabled"
    display_active: bool | None = None
    compute_mode: str | None = None  # "default", "exclusive_process", "prohibited", "exclusive_thread"
    ecc_errors_uncorrected: int | None = None  # since the driver loaded (NVML's volatile counter)
    mig_mode: str | None = None  # "enabled" / "disabled"
    mig_mode_pending: str | None = None  # the mode after the next GPU reset
    mig_instances: list[MigInstance] | None = None  # one per MIG device when MIG is enabled
    status: str = OK  # LOST when the GPU fell off the bus since it was enumerated
    bar1_used_bytes: int | None = None  # NVIDIA: the BAR1 aperture the CPU and peers map GPU memory through
    bar1_total_bytes: int | None = None
    pcie_tx_bytes_per_s: float | None = None  # NVIDIA: PCIe throughput over NVML's last 20 ms
    pcie_rx_bytes_per_s: float | None = None
    nvlink_tx_bytes_per_s: float | None = None  # NVIDIA: every active link, between two readings
    nvlink_rx_bytes_per_s: float | None = None
    memory_source: str | None = None  # "unified (host memory)": a GPU without memory of its own (GB10)


@dataclass
class Runtime:
    torch: str | None = None
    cuda: str | None = None  # the CUDA torch was built with
    hip: str | None = None
    driver: str | None = None
    cuda_driver: str | None = None  # the newest CUDA the NVIDIA driver supports ("12.4")
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> reason


@dataclass
class Host:
    hostname: str | None = None
    machine: str | None = None
    os: str | None = None


def to_dict(obj: Any) -> Any:
    """Dataclasses to JSON-ready dicts (recursively)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, bytes):  # a last guard: old bindings return bytes, JSON cannot hold them
        return obj.decode(errors="replace")
    return obj


def json_safe(value: Any) -> Any:
    """Non-finite floats become None (recursively), so every JSON output is strict JSON: NaN and Infinity are
    not JSON, and `json.dumps(..., allow_nan=False)` would raise on them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def from_dict(cls: type, data: dict[str, Any]) -> Any:
    """Build a flat dataclass from a dict, ignoring keys it does not know (forward compatibility)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})
