"""Mixed precision for training code: which dtype, whether to scale the loss, what to tell Lightning.

    from gpudash.amp import AmpConfig
    amp = AmpConfig.auto()                  # or AmpConfig.auto("cuda:1"), AmpConfig.force_bf16()
    scaler = amp.grad_scaler()              # a GradScaler that is only enabled for float16
    with amp.autocast():
        loss = model(batch)
    trainer = lightning.Trainer(**amp.trainer_kwargs())   # precision="bf16-mixed" / "16-mixed" / "32-true"

Decisions are gpudash.recommend.decisions', the same `gpudash export` writes, fed with the facts of the same
device (gpudash.recommend.machine_facts): the tables, and what probe, bench and export remembered for it. With
GPUDASH_REPLAY set (or `machine=` a snapshot path or a Machine) the answers are for that machine, spec only.
CPU rule: bf16 only where the CPU has it natively and it was measured faster than fp32; fp16 is never picked
automatically on a CPU. The bf16 plan's names (get_bf16_capability, detect_bf16_support, get_optimal_dtype, ...)
are here too; docs/api.md documents each with an example. torch is imported inside the functions, so importing
this package is free.
"""

from __future__ import annotations

from gpudash.amp.bf16 import (
    Bf16Capability,
    detect_bf16_support,
    get_amp_dtype_for_device,
    get_bf16_capability,
    get_optimal_dtype,
    is_bf16_tensor,
    print_bf16_status,
    safe_to_bf16,
)
from gpudash.amp.checkpointing import enable_gradient_checkpointing
from gpudash.amp.config import (
    PRECISION_OF,
    AmpConfig,
    PrecisionUnavailableError,
    autocast_context,
    grad_scaler,
    lightning_precision,
)
from gpudash.amp.decide import kernel_precision, precision_advice
from gpudash.amp.evidence import Evidence, gather, resolve_device

__all__ = [
    "PRECISION_OF",
    "AmpConfig",
    "Bf16Capability",
    "Evidence",
    "PrecisionUnavailableError",
    "autocast_context",
    "detect_bf16_support",
    "enable_gradient_checkpointing",
    "gather",
    "get_amp_dtype_for_device",
    "get_bf16_capability",
    "get_optimal_dtype",
    "grad_scaler",
    "is_bf16_tensor",
    "kernel_precision",
    "lightning_precision",
    "precision_advice",
    "print_bf16_status",
    "resolve_device",
    "safe_to_bf16",
]
