"""The public plugin API: the one gpudash module a plugin imports.

A plugin is a module (an installed package's entry point in the group "gpudash", or a one-file plugin in a
plugins directory) with functions marked `@hookimpl`, named after the hooks in `gpudash.hookspecs`:

    from gpudash.plugins_api import Check, hookimpl

    class Threads(Check):
        name = "torch_threads"
        def run(self, device):
            return self.passed("ok")

    @hookimpl
    def register_checks(register):
        register(Threads())

Everything here is plain data and small functions: importable without torch or Textual, so listing plugins
stays instant. Plugin code imports torch lazily, inside `run`. Checks and benchmarks run in a child process
with a time limit (gpudash.plugin_host), never in the gpudash process itself.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, ClassVar

import pluggy

from gpudash.precisions import PRECISIONS

PROJECT = "gpudash"
ENTRY_POINT_GROUP = "gpudash"
API_VERSION = 1

hookimpl = pluggy.HookimplMarker(PROJECT)

# Check verdicts a check may give.
PASS, WARN, FAIL, SKIP = "pass", "warn", "fail", "skip"
STATUSES = (PASS, WARN, FAIL, SKIP)
# Given by gpudash, never by a check: the check itself raised, hung, or killed its process.
ERROR = "error"
NOT_RUN_REPLAYED = "not run: replayed"


# Devices ----------------------------------------------------------------------------------------


@dataclass
class Device:
    """What a plugin is told about one device: plain data, the same in the child process as in gpudash."""

    vendor: str  # "nvidia" | "amd" | "cpu"
    index: int
    name: str
    compute_capability: str | None = None  # "9.0" (NVIDIA)
    gfx_target: str | None = None  # "gfx942" (AMD)
    torch_index: int | None = None  # the torch.cuda ordinal; None for the CPU or when torch does not see it
    memory_total_bytes: int | None = None
    multiprocessors: int | None = None  # SMs, CUs, or physical cores
    max_clock_mhz: int | None = None
    cpu_features: list[str] = field(default_factory=list)  # CPU only, torch.cpu.get_capabilities() names
    runtime: dict[str, str | None] = field(default_factory=dict)  # torch, cuda, hip, driver versions
    replayed: bool = False  # a snapshot, not this machine: run nothing on it
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.vendor}:{self.index}"

    @property
    def torch_device(self) -> str | None:
        """The torch device string to run on ("cpu", "cuda:0"; ROCm devices are "cuda" too), or None."""
        if self.vendor == "cpu":
            return "cpu"
        return None if self.torch_index is None else f"cuda:{self.torch_index}"

    @property
    def rocm_version(self) -> tuple[int, int] | None:
        """(major, minor) of the HIP runtime ("7.1.25424" -> (7, 1)), None when unknown or not ROCm."""
        match = re.match(r"\s*(\d+)\.(\d+)", str(self.runtime.get("hip") or ""))
        return (int(match.group(1)), int(match.group(2))) if match else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Device:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Arch:
    """Architecture facts from gpudash's reference tables (not measured)."""

    family: str  # "Hopper", "CDNA3", "RDNA3.5", "Zen 4", "CPU", "unknown"
    precisions: dict[str, str]  # precision name -> "native" | "emulated" | "absent"
    fp8_dtype: str | None  # torch dtype name for fp8 e4m3 here ("float8_e4m3fnuz" on gfx942), None if absent
    fp8_e5m2_dtype: str | None
    notes: tuple[str, ...] = ()

    def is_native(self, precision: str) -> bool:
        return self.precisions.get(precision) == "native"


def arch_of(device: Device) -> Arch:
    """The architecture facts for a device (compute capability, gfx target or CPU features). Never raises."""
    from gpudash.knowledge import arch_for

    info = arch_for(device)
    return Arch(info.family, dict(info.precisions), info.fp8_dtype, info.fp8_e5m2_dtype, tuple(info.notes))


def peak_gflops(device: Device, precision: str) -> float | None:
    """The theoretical dense peak for a precision (GFLOPS; GOPS for int8), None when the tables have none."""
    from gpudash.knowledge import peaks_for

    peak = peaks_for(device).get(precision)
    return peak.gflops if peak else None


def local_device(torch_device: Any = "cpu") -> Device:
    """Describe a torch device of *this* process (imports torch): what a dispatcher needs to choose a kernel."""
    import torch

    dev = torch.device(torch_device)
    runtime = {"torch": torch.__version__, "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None)}
    if dev.type == "cpu":
        from gpudash.devices.cpu import CpuBackend

        info = CpuBackend().devices()[0]
        return Device("cpu", 0, info.name, multiprocessors=info.multiprocessors, max_clock_mhz=info.max_clock_mhz,
                      memory_total_bytes=info.memory_total_bytes, cpu_features=list(info.cpu_features),
                      runtime=runtime, extra=dict(info.extra))
    if dev.type == "cuda":
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        common = dict(torch_index=index, memory_total_bytes=props.total_memory,
                      multiprocessors=props.multi_processor_count, runtime=runtime)
        if runtime["hip"]:
            gfx = (getattr(props, "gcnArchName", "") or "").split(":")[0] or None
            return Device("amd", index, props.name, gfx_target=gfx, **common)
        return Device("nvidia", index, props.name, compute_capability=f"{props.major}.{props.minor}", **common)
    raise ValueError(f"no architecture facts for torch device type {dev.type!r}")


# Checks -----------------------------------------------------------------------------------------


@dataclass
class CheckResult:
    """One check on one device. `env` holds environment variables to set (NAME -> value) as the fix."""

    plugin: str
    check: str
    device: str  # device key, "amd:0"
    status: str  # pass | warn | fail | skip (gpudash adds "error" when the check itself broke)
    summary: str
    remediation: str = ""
    env: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class Check:
    """Base class for a check. Subclass it, set `name`, implement `run(device)` returning a CheckResult.

    `needs_device = False` declares a check answered from tables alone (gfx target, versions): it then runs on
    replayed machines too. A check that runs device code keeps the default True and is skipped on a replay.
    `vendors = ("amd",)` limits it to those devices: gpudash skips the others without running anything.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    needs_device: ClassVar[bool] = True
    vendors: ClassVar[tuple[str, ...] | None] = None  # None: every device
    timeout_s: ClassVar[float | None] = None  # None: gpudash's default limit

    def run(self, device: Device) -> CheckResult:
        raise NotImplementedError(f"{type(self).__name__}.run")

    def result(self, status: str, summary: str, *, remediation: str = "", env: dict[str, str] | None = None,
               details: dict[str, Any] | None = None) -> CheckResult:
        """A result for this check; gpudash fills in the plugin and device."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        return CheckResult("", self.name, "", status, summary, remediation, dict(env or {}), dict(details or {}))

    def passed(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(PASS, summary, **kw)

    def warned(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(WARN, summary, **kw)

    def failed(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(FAIL, summary, **kw)

    def skipped(self, summary: str, **kw: Any) -> CheckResult:
        return self.result(SKIP, summary, **kw)


# Benchmarks -------------------------------------------------------------------------------------


@dataclass
class BenchResult:
    """One measured case, in the shape of a `gpudash bench --json` result (design.md)."""

    precision: str  # a name from PRECISIONS
    op: str  # "matmul", "adaptive_matmul", "axpy", ...
    shape: list[int]
    gflops: float | None
    median_s: float | None
    efficiency: float | None = None  # measured / theoretical peak; gpudash fills it when left None
    details: dict[str, Any] = field(default_factory=dict)  # anything else worth showing (speedup, error)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Benchmark:
    """Base class for a benchmark. Subclass it, set `name`, implement `run(device, budget_s)`.

    `run` returns a list of BenchResult (or bench-style dicts, or gpudash.measure.schema.PrecisionTestResult).
    `budget_s` is roughly how long to spend timing each case. Benchmarks never run on a replayed machine.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    timeout_s: ClassVar[float | None] = None

    def run(self, device: Device, budget_s: float) -> list[BenchResult]:
        raise NotImplementedError(f"{type(self).__name__}.run")


def bench_result_dict(item: Any) -> dict[str, Any]:
    """A benchmark's result item (BenchResult, dict or PrecisionTestResult) as a bench-style dict."""
    from gpudash.measure.schema import PrecisionTestResult

    if isinstance(item, BenchResult):
        out = item.to_dict()
    elif isinstance(item, PrecisionTestResult):
        n = item.test_size
        latency = item.mean_latency_ms
        out = {"precision": item.precision, "op": "matmul", "shape": [n, n, n] if n else [],
               "gflops": item.measured_gflops, "median_s": latency / 1e3 if latency is not None else None,
               "efficiency": item.efficiency,
               "details": {k: v for k, v in item.to_dict().items() if v not in (None, {}, [])}}
    elif isinstance(item, dict):
        out = dict(item)
    else:
        raise TypeError("a benchmark result must be a BenchResult, dict or PrecisionTestResult, "
                        f"not {type(item).__name__}")
    missing = [k for k in ("precision", "op", "gflops", "median_s") if k not in out]
    if missing:
        raise ValueError(f"benchmark result lacks {', '.join(missing)}")
    if out["precision"] not in PRECISIONS:
        raise ValueError(f"benchmark result precision {out['precision']!r} is not one of {', '.join(PRECISIONS)}")
    out.setdefault("shape", [])
    out.setdefault("efficiency", None)
    out["shape"] = [int(v) for v in out["shape"]]
    return out


# Kernels (the register_kernels hook) ------------------------------------------------------------


@dataclass(frozen=True)
class KernelQuery:
    """What a kernel predicate sees: the device, its facts, and the call's operand shapes."""

    device: Device
    arch: Arch
    shapes: tuple[tuple[int, ...], ...]  # operand shapes, e.g. ((M, K), (N, K)) for matmul(x, w)
    dtype: str = "float32"  # the operands' torch dtype name
    requires_grad: bool = False  # autograd will need a backward pass through the result


@dataclass(frozen=True)
class Kernel:
    """One implementation of an operation, chosen when `predicate(query)` is true (highest priority first)."""

    op: str  # "matmul"
    name: str  # "bf16", "fp8_e4m3fn_scaled_mm", ...
    precision: str  # the gpudash precision it computes in
    predicate: Callable[[KernelQuery], bool]
    implementation: Callable[..., Any]
    priority: int = 0
    description: str = ""


def collect_kernels(op: str | None = None) -> list[Kernel]:
    """Kernels every loaded plugin registers through `register_kernels` (entry points; GPUDASH_LOAD_PLUGINS
    applies). Load errors go to stderr. Cached per process."""
    from gpudash.plugin_manager import kernels_from_plugins

    return [k for k in kernels_from_plugins() if op is None or k.op == op]


__all__ = [
    "API_VERSION", "ENTRY_POINT_GROUP", "ERROR", "FAIL", "NOT_RUN_REPLAYED", "PASS", "PRECISIONS", "PROJECT",
    "SKIP", "STATUSES", "WARN", "Arch", "BenchResult", "Benchmark", "Check", "CheckResult", "Device", "Kernel",
    "KernelQuery", "arch_of", "bench_result_dict", "collect_kernels", "hookimpl", "local_device", "peak_gflops",
]
