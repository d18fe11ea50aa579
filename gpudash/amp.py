"""Mixed precision for training code: which dtype, whether to scale the loss, what to tell Lightning.

    from gpudash.amp import AmpConfig
    amp = AmpConfig.auto()                  # or AmpConfig.auto("cuda:1"), AmpConfig.force_bf16()
    scaler = amp.grad_scaler()              # a GradScaler that is only enabled for float16
    with amp.autocast():
        loss = model(batch)
    trainer = lightning.Trainer(precision=amp.lightning_precision)

Decisions are the recommender's (gpudash.recommend.amp), the same rules `gpudash export` follows, fed
with what gpudash remembers for this machine: verified probe results (`gpudash probe` or the TUI) and the
measured speed of each precision (`gpudash bench`). CPU rule: bf16 only where the CPU has it natively and a
benchmark measured it faster than fp32; fp16 is never picked automatically on a CPU.
torch is imported inside the functions, so importing this module is free.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from gpudash.errors import GpudashError
from gpudash.recommend.amp import ACCELERATE_MIXED_PRECISION, LIGHTNING_PRECISION

PRECISION_OF = {"bfloat16": "bf16", "float16": "fp16"}


class PrecisionUnavailableError(GpudashError):
    """A forced precision that this device does not run correctly or natively."""


def _torch():
    import torch

    return torch


def resolve_device(device: Any = None) -> str:
    """None, an int, "cpu", "cuda", "cuda:N" or a torch.device -> "cpu" or "cuda:N" (ROCm is cuda:N too)."""
    torch = _torch()
    if device is None:
        return f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        return f"cuda:{device}"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise GpudashError(f"device {device!r}: {exc}") from None
    if dev.type == "cpu":
        return "cpu"
    if dev.type == "cuda":
        return f"cuda:{dev.index if dev.index is not None else torch.cuda.current_device()}"
    raise GpudashError(f"device {device!r}: gpudash.amp knows cpu and cuda devices (ROCm GPUs are cuda too)")


# What gpudash knows about one device ---------------------------------------------------------------


@dataclass
class Evidence:
    torch_device: str
    device: Any  # gpudash.models.DeviceInfo
    probe: Any = None  # PrecisionCapabilityMatrix remembered for this device, or None
    bench_speedup: dict[str, float] = field(default_factory=dict)  # remembered benchmark, precision -> x fp32
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.device.key} ({self.device.name})"

    @property
    def is_cpu(self) -> bool:
        return self.device.vendor == "cpu"

    def result(self, precision: str):
        return self.probe.results.get(precision) if self.probe is not None else None


def _live_machine(notes: list[str]):
    from gpudash.devices import REPLAY_ENV, discover

    if os.environ.get(REPLAY_ENV):
        notes.append(f"{REPLAY_ENV} is set: remembered results of the live machine are not used")
        return None
    try:
        return discover(include_torch=True)
    except Exception as exc:
        notes.append(f"device discovery failed: {exc}")
        return None


def _device_info(machine, torch_device: str):
    """The gpudash device for a torch device: from the machine, else described by torch/the CPU itself."""
    if machine is not None:
        for dev in machine.devices:
            if (torch_device == "cpu" and dev.vendor == "cpu") or (
                dev.vendor != "cpu" and dev.torch_index is not None and f"cuda:{dev.torch_index}" == torch_device
            ):
                return dev
    if torch_device == "cpu":
        from gpudash.devices.cpu import CpuBackend

        return CpuBackend().devices()[0]
    from gpudash.devices.torch_view import TorchView

    index = int(torch_device.split(":")[1])
    found = [d for d in TorchView(_torch()).devices() if d.torch_index == index]
    if not found:
        raise GpudashError(f"device {torch_device}: torch does not see it")
    return found[0]


def _bench_runs(machine) -> list:
    """Remembered benchmark results (bench JSON contract documents), newest first: the history that
    `gpudash bench` and the TUI keep."""
    from gpudash.measure.bench.store import saved_runs

    return [data for _saved_at, data in saved_runs(machine)]


def _bench_speedups(machine, device) -> dict[str, float]:
    """precision -> measured speedup over fp32 for this device, from the newest benchmark that has it."""
    for doc in _bench_runs(machine):
        for entry in doc.get("devices") or []:
            if not isinstance(entry, dict):
                continue
            same = (
                entry.get("key") == device.key
                if entry.get("key")
                else (entry.get("index") == device.index and entry.get("name") == device.name)
            )
            speed = entry.get("speedup_vs_fp32")
            if same and isinstance(speed, dict):
                return {k: float(v) for k, v in speed.items() if isinstance(v, (int, float))}
    return {}


def gather(device: Any = None, use_verified: bool = True) -> Evidence:
    """Everything gpudash.amp decides from, for one device."""
    torch_device = resolve_device(device)
    notes: list[str] = []
    machine = _live_machine(notes) if use_verified else None
    info = _device_info(machine, torch_device)
    evidence = Evidence(torch_device, info, notes=notes)
    if machine is not None:
        from gpudash.measure.probe import remembered

        saved = remembered(machine)
        if saved is not None:
            evidence.probe = saved[1].get(info.key)
        evidence.bench_speedup = _bench_speedups(machine, info)
    return evidence


# Decisions ------------------------------------------------------------------------------------------


def _facts(ev: Evidence):
    """The recommender's input for this device: what was remembered, and why the rest is missing."""
    from gpudash.measure.schema import PrecisionCapabilityMatrix
    from gpudash.recommend import facts_for

    bench = None
    if ev.bench_speedup:
        bench = PrecisionCapabilityMatrix(
            hardware_name=ev.device.name, device=ev.device.key, speedup_vs_fp32=dict(ev.bench_speedup)
        )
    not_run = {}
    if ev.probe is None:
        not_run["probe"] = "no remembered probe (run `gpudash probe`)"
    if bench is None:
        not_run["bench"] = "no remembered benchmark (run `gpudash bench`)"
    return facts_for(ev.device, probe=ev.probe, bench=bench, not_run=not_run)


def _choice(ev: Evidence):
    from gpudash.recommend.amp import choose_dtype

    return choose_dtype(_facts(ev))


def _allowed(ev: Evidence, precision: str) -> tuple[bool, str]:
    """Whether forcing `precision` is safe: native, and not found broken by a probe or a check."""
    from gpudash.recommend.evidence import judge

    verdict = judge(_facts(ev), precision)
    return verdict.ok, f"{ev.label}: {verdict.reason}"


def detect_bf16_support(device: Any = None, use_verified: bool = True) -> tuple[bool, str]:
    """(bf16 is the right mixed-precision dtype here, why)."""
    ev = gather(device, use_verified)
    choice = _choice(ev)
    return choice.dtype == "bfloat16", f"{ev.label}: {choice.reason}"


def get_optimal_dtype(device: Any = None, use_verified: bool = True):
    """torch.bfloat16, torch.float16 or torch.float32, as AmpConfig.auto decides."""
    return AmpConfig.auto(device, use_verified).dtype


def lightning_precision(dtype: Any) -> str:
    """Lightning's `precision=` for an autocast dtype (torch dtype or its name)."""
    return LIGHTNING_PRECISION[_dtype_name(dtype)]


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


# The configuration ----------------------------------------------------------------------------------


@dataclass
class AmpConfig:
    dtype: Any  # torch.bfloat16 | torch.float16 | torch.float32 (autocast off)
    enabled: bool
    loss_scaling: str  # "dynamic" (GradScaler) for float16, else "none"
    lightning_precision: str  # "bf16-mixed" | "16-mixed" | "32-true"
    accelerate_mixed_precision: str  # "bf16" | "fp16" | "no"
    device: str  # "cpu" | "cuda:N"
    reasons: list[str] = field(default_factory=list)
    verified: bool | None = None  # the dtype passed gpudash's probe here (None: no probe result used)

    @property
    def dtype_name(self) -> str:
        return _dtype_name(self.dtype)

    @classmethod
    def for_dtype(cls, dtype_name: str, device: str, reasons: list[str], verified: bool | None = None) -> AmpConfig:
        name = _dtype_name(dtype_name)
        return cls(
            dtype=getattr(_torch(), name),
            enabled=name != "float32",
            loss_scaling="dynamic" if name == "float16" else "none",
            lightning_precision=LIGHTNING_PRECISION[name],
            accelerate_mixed_precision=ACCELERATE_MIXED_PRECISION[name],
            device=device,
            reasons=list(reasons),
            verified=verified,
        )

    @classmethod
    def auto(cls, device: Any = None, use_verified: bool = True) -> AmpConfig:
        """bf16 where it is right, else fp16 with dynamic loss scaling (GPUs), else fp32."""
        ev = gather(device, use_verified)
        choice = _choice(ev)
        reasons = [*ev.notes, f"{ev.label}: {choice.reason}"]
        return cls.for_dtype(choice.dtype, ev.torch_device, reasons, _verified(ev, PRECISION_OF.get(choice.dtype)))

    @classmethod
    def force_bf16(cls, device: Any = None, use_verified: bool = True) -> AmpConfig:
        """bf16 or a PrecisionUnavailableError naming the device and the reason."""
        ev = gather(device, use_verified)
        ok, why = _allowed(ev, "bf16")
        if not ok:
            raise PrecisionUnavailableError(f"cannot force bf16 on {ev.torch_device}: {why}")
        return cls.for_dtype("bfloat16", ev.torch_device, [*ev.notes, why, "bf16 forced"], _verified(ev, "bf16"))

    @classmethod
    def force_fp16(cls, device: Any = None, use_verified: bool = True) -> AmpConfig:
        """fp16 with dynamic loss scaling; refused only where gpudash's probe found fp16 wrong here."""
        ev = gather(device, use_verified)
        result = ev.result("fp16")
        if result is not None and result.verdict == "failed":
            raise PrecisionUnavailableError(
                f"cannot force fp16 on {ev.torch_device}: {ev.label}: the probe found fp16 broken here "
                f"({result.failure_reason})"
            )
        reasons = [*ev.notes, "fp16 forced", "float16 needs dynamic loss scaling (GradScaler)"]
        if result is not None and result.verdict == "slow_reference":
            reasons.append(
                f"{ev.label}: fp16 {(result.details or {}).get('note') or 'runs only as a slow reference path'}"
            )
        if ev.is_cpu:
            reasons.append("on a CPU Lightning turns 16-mixed into bf16-mixed and accelerate refuses fp16")
        return cls.for_dtype("float16", ev.torch_device, reasons, _verified(ev, "fp16"))

    def autocast(self) -> AbstractContextManager:
        """torch.autocast for this device and dtype (disabled for float32)."""
        torch = _torch()
        dtype = self.dtype if self.enabled else None
        return torch.autocast(device_type=self.device.split(":")[0], dtype=dtype, enabled=self.enabled)

    def grad_scaler(self):
        """torch.amp.GradScaler, enabled only when the loss needs scaling (float16)."""
        return _torch().amp.GradScaler(self.device.split(":")[0], enabled=self.loss_scaling == "dynamic")


def _verified(ev: Evidence, precision: str | None) -> bool | None:
    result = ev.result(precision) if precision else None
    return None if result is None or result.verified is None else result.verdict == "verified"


def autocast_context(config: AmpConfig | None = None, device: Any = None) -> AbstractContextManager:
    """`with autocast_context():` uses AmpConfig.auto(device) unless a config is given."""
    return (config or AmpConfig.auto(device)).autocast()


def grad_scaler(config: AmpConfig | None = None, device: Any = None):
    return (config or AmpConfig.auto(device)).grad_scaler()
