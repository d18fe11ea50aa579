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


@dataclass
class ProcessUsage:
    pid: int
    name: str | None = None
    memory_used_bytes: int | None = None


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


@dataclass
class Runtime:
    torch: str | None = None
    cuda: str | None = None
    hip: str | None = None
    driver: str | None = None


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
