"""AmpConfig: the autocast dtype, loss scaling and framework values for one device, decided or given.

    AmpConfig.auto()                               # the export's decision for this device (or the replayed one)
    AmpConfig(dtype=torch.bfloat16, enabled=True)  # given: the other fields follow from the dtype
    AmpConfig.force_bf16() / AmpConfig.force_fp16()

Decisions go through gpudash.recommend.decisions with the facts of gpudash.amp.evidence, so AmpConfig.auto()
answers what `gpudash export` writes for the same device and the same remembered measurements.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from gpudash.amp.evidence import Evidence, gather, resolve_device
from gpudash.errors import GpudashError
from gpudash.recommend.amp import ACCELERATE_MIXED_PRECISION, LIGHTNING_PRECISION

PRECISION_OF = {"bfloat16": "bf16", "float16": "fp16"}
LOSS_SCALING = ("dynamic", "none")


class PrecisionUnavailableError(GpudashError, RuntimeError):
    """A forced precision that this device does not run correctly or natively (a RuntimeError too, as the
    bf16 plan's force_bf16 raised)."""


def _torch():
    import torch

    return torch


def dtype_name(dtype: Any) -> str:
    """torch.bfloat16 / "bfloat16" / "torch.bfloat16" -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")


def lightning_precision(dtype: Any) -> str:
    """Lightning's `precision=` for an autocast dtype (torch dtype or its name)."""
    return LIGHTNING_PRECISION[dtype_name(dtype)]


def _verified(ev: Evidence, precision: str | None) -> bool | None:
    result = ev.result(precision) if precision else None
    return None if result is None or result.verified is None else result.verdict == "verified"


@dataclass
class AmpConfig:
    """Mixed precision for one device. Construct it with a dtype (the rest follows), or ask `auto()`.

    `dtype=None` decides it as `auto()` does (the bf16 plan's `default_factory=get_optimal_dtype`). float32, or
    `enabled=False`, means no autocast: loss scaling "none" and Lightning's "32-true".
    """

    dtype: Any = None  # torch.bfloat16 | torch.float16 | torch.float32 (or their names)
    enabled: bool = True
    loss_scaling: str | None = None  # "dynamic" (GradScaler) for float16, else "none"
    lightning_precision: str | None = None  # "bf16-mixed" | "16-mixed" | "32-true"
    accelerate_mixed_precision: str | None = None  # "bf16" | "fp16" | "no"
    device: str | None = None  # "cpu" | "cuda:N"; None: torch's current device here
    reasons: list[str] = field(default_factory=list)
    verified: bool | None = None  # the dtype passed gpudash's probe here (None: no probe result used)
    gradient_checkpointing: bool = False  # recompute activations in backward (configure_model applies it)

    def __post_init__(self) -> None:
        if self.dtype is None:
            decided = AmpConfig.auto(self.device)
            self.dtype, self.device = decided.dtype, decided.device
            self.reasons = [*decided.reasons, *self.reasons]
            self.verified = decided.verified
        name = dtype_name(self.dtype)
        if name not in LIGHTNING_PRECISION:
            raise GpudashError(
                f"AmpConfig(dtype={self.dtype!r}): expected torch.bfloat16, torch.float16 or torch.float32"
            )
        self.dtype = getattr(_torch(), name)
        self.enabled = bool(self.enabled) and name != "float32"
        effective = name if self.enabled else "float32"
        if self.loss_scaling is None:
            self.loss_scaling = "dynamic" if effective == "float16" else "none"
        if self.loss_scaling not in LOSS_SCALING:
            raise GpudashError(f"AmpConfig(loss_scaling={self.loss_scaling!r}): expected 'dynamic' or 'none'")
        self.lightning_precision = self.lightning_precision or LIGHTNING_PRECISION[effective]
        self.accelerate_mixed_precision = self.accelerate_mixed_precision or ACCELERATE_MIXED_PRECISION[effective]
        self.device = self.device or resolve_device(None)

    @property
    def dtype_name(self) -> str:
        return dtype_name(self.dtype)

    @property
    def loss_scale(self) -> str:
        """The bf16 plan's name for `loss_scaling`."""
        return str(self.loss_scaling)

    # Constructors -----------------------------------------------------------------------------------

    @classmethod
    def for_dtype(
        cls, dtype: Any, device: str, reasons: list[str], verified: bool | None = None, **kwargs: Any
    ) -> AmpConfig:
        return cls(dtype=dtype, enabled=True, device=device, reasons=list(reasons), verified=verified, **kwargs)

    @classmethod
    def auto(
        cls,
        device: Any = None,
        use_verified: bool = True,
        machine: Any = None,
        gradient_checkpointing: bool = False,
    ) -> AmpConfig:
        """The export's decision for `device` (None: torch's current device, or the replayed machine's first
        GPU): bf16 where it is right, else fp16 with dynamic loss scaling (GPUs), else fp32.

        `machine`: a Machine or a snapshot path to answer for instead of this machine (GPUDASH_REPLAY does the
        same); `use_verified=False` ignores remembered probe and benchmark results.
        """
        from gpudash.recommend import decisions

        ev = gather(device, use_verified, machine)
        choice = decisions.amp_dtype(ev.facts)
        reasons = [*ev.notes, f"{ev.label}: {choice.reason}"]
        return cls.for_dtype(
            choice.dtype,
            ev.torch_device,
            reasons,
            _verified(ev, PRECISION_OF.get(choice.dtype)),
            gradient_checkpointing=gradient_checkpointing,
        )

    @classmethod
    def force_bf16(cls, device: Any = None, use_verified: bool = True, machine: Any = None) -> AmpConfig:
        """bf16, or a PrecisionUnavailableError naming the device and the reason (bf16 not native, found
        broken by the probe or a check, or measured slower than fp32)."""
        from gpudash.recommend.evidence import judge

        ev = gather(device, use_verified, machine)
        verdict = judge(ev.facts, "bf16")
        why = f"{ev.label}: {verdict.reason}"
        if not verdict.ok:
            raise PrecisionUnavailableError(f"cannot force bf16 on {ev.torch_device}: {why}")
        reasons = [*ev.notes, why, "bf16 forced"]
        caution = ev.facts.arch.cautions.get("bf16")
        if caution:
            reasons.append(f"caution from the tables: {caution}")
        return cls.for_dtype("bfloat16", ev.torch_device, reasons, _verified(ev, "bf16"))

    @classmethod
    def force_fp16(cls, device: Any = None, use_verified: bool = True, machine: Any = None) -> AmpConfig:
        """fp16 with dynamic loss scaling; refused only where gpudash's probe found fp16 wrong here."""
        ev = gather(device, use_verified, machine)
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

    # Use ----------------------------------------------------------------------------------------------

    def autocast(self) -> AbstractContextManager:
        """torch.autocast for this device and dtype (disabled for float32)."""
        torch = _torch()
        dtype = self.dtype if self.enabled else None
        return torch.autocast(device_type=str(self.device).split(":")[0], dtype=dtype, enabled=self.enabled)

    def grad_scaler(self):
        """torch.amp.GradScaler, enabled only when the loss needs scaling (float16)."""
        return _torch().amp.GradScaler(str(self.device).split(":")[0], enabled=self.loss_scaling == "dynamic")

    def trainer_kwargs(self) -> dict[str, Any]:
        """Lightning: `Trainer(**amp.trainer_kwargs())` selects the matching precision plugin."""
        return {"precision": self.lightning_precision}

    def accelerate_kwargs(self) -> dict[str, Any]:
        """accelerate: `Accelerator(**amp.accelerate_kwargs())`."""
        return {"mixed_precision": self.accelerate_mixed_precision}

    def configure_model(self, model: Any, module_types: Any = None) -> list[str]:
        """Apply this config's gradient-checkpointing setting to `model` (a LightningModule calls it from its
        `configure_model` hook); returns what was checkpointed, [] when the setting is off."""
        if not self.gradient_checkpointing:
            return []
        from gpudash.amp.checkpointing import enable_gradient_checkpointing

        return enable_gradient_checkpointing(model, module_types)


def autocast_context(config: AmpConfig | None = None, device: Any = None) -> AbstractContextManager:
    """`with autocast_context():` uses AmpConfig.auto(device) unless a config is given."""
    return (config or AmpConfig.auto(device)).autocast()


def grad_scaler(config: AmpConfig | None = None, device: Any = None):
    return (config or AmpConfig.auto(device)).grad_scaler()
