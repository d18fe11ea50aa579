"""When not even one sample fits: what the estimate or the trial steps show, and what would make it fit.

Each way out is named only where it helps: gradient checkpointing recomputes activations in the backward pass,
so it cuts activation memory and nothing else; a lower precision for the weights, gradients and optimizer state
cuts the 16 bytes per parameter the estimate counts (fp32 weights and gradients, AdamW's two fp32 states); a
smaller model cuts both. (The AMP dtype alone changes activations, not those 16 bytes: autocast keeps fp32
weights.)
"""

from __future__ import annotations

GIB = 1024**3
CHECKPOINTING = (
    "gradient checkpointing (recomputes activations in the backward pass: gpudash.amp's "
    "AmpConfig(gradient_checkpointing=True).configure_model(model), or the framework's own switch)"
)
LOWER_PRECISION = (
    "a lower precision for the weights, gradients and optimizer state (bf16 weights, an 8-bit optimizer; "
    "the estimate counts 16 bytes per parameter)"
)


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB"


def model_alone(usable: float, per_param: int, params: int, fixed: float) -> str:
    """The weights, gradients and optimizer state alone exceed the usable memory: checkpointing cannot help."""
    most = int(max(0.0, usable - fixed) // per_param)
    smaller = (
        f"a smaller model (at most {most / 1e6:,.1f} M parameters fit before any activations)"
        if most >= 1_000_000
        else "a smaller model"
    )
    return (
        f"does not fit: weights, gradients and AdamW state take {_gib(params * per_param)} "
        f"({params / 1e6:,.1f} M parameters x {per_param} bytes), with {_gib(fixed)} of other fixed memory, "
        f"against {_gib(usable)} usable. To fit: {LOWER_PRECISION}, or {smaller}; gradient checkpointing "
        "would not help, it only cuts activations"
    )


def one_sample(activation_bytes: float, left: float) -> str:
    """The model fits, but one sample's activations do not fit in what is left."""
    return (
        f"does not fit: one sample's activations take {activation_bytes / 2**20:,.0f} MiB, and "
        f"{left / 2**20:,.0f} MiB is left after the weights, gradients and optimizer state. "
        f"To fit: {CHECKPOINTING}, a shorter sequence or smaller input, {LOWER_PRECISION}, or a smaller model"
    )


def trial(first_oom: int | None) -> str:
    """Trial steps on the device ran out of memory at the first size."""
    at = f" (a batch of {first_oom} ran out of memory)" if first_oom else ""
    return (
        f"does not fit: not even one sample trained on the device in trial steps{at}. "
        f"To fit: {CHECKPOINTING}, {LOWER_PRECISION}, or a smaller model"
    )
