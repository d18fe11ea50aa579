"""Gradient checkpointing: keep fewer activations, recompute them in the backward pass.

`enable_gradient_checkpointing(model)` turns it on for a Hugging Face model through its own
`gradient_checkpointing_enable()`, and for any other nn.Module by running each repeated block (every child of
every nn.ModuleList, or the modules of `module_types`) under torch.utils.checkpoint (non-reentrant). A block is
checkpointed only in training mode with gradients enabled, so eval and inference run as before. Imports torch.
"""

from __future__ import annotations

from typing import Any

from gpudash.errors import GpudashError

_ORIGINAL = "_gpudash_forward_before_checkpointing"


def _checkpointed_forward(module: Any, forward: Any):
    from torch.utils.checkpoint import checkpoint

    def run(*args: Any, **kwargs: Any):
        import torch

        if module.training and torch.is_grad_enabled():
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)
        return forward(*args, **kwargs)

    return run


def _targets(model: Any, module_types: Any) -> list[tuple[str, Any]]:
    from torch import nn

    if module_types is not None:
        kinds = tuple(module_types) if isinstance(module_types, (list, tuple, set)) else (module_types,)
        return [(name, m) for name, m in model.named_modules() if name and isinstance(m, kinds)]
    out = []
    for name, holder in model.named_modules():
        if isinstance(holder, nn.ModuleList):
            out += [(f"{name}.{child}" if name else child, m) for child, m in holder.named_children()]
    return out


def enable_gradient_checkpointing(model: Any, module_types: Any = None) -> list[str]:
    """Checkpoint `model`'s repeated blocks; returns their names (a Hugging Face model: its class name).

    Raises GpudashError when the model has nothing to checkpoint (no nn.ModuleList and no `module_types` given),
    rather than leaving the setting silently without effect. Applying it twice changes nothing.
    """
    enable = getattr(model, "gradient_checkpointing_enable", None)
    if callable(enable) and module_types is None:
        try:
            enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        except TypeError:  # transformers before 4.35 takes no kwargs
            enable()
        return [type(model).__name__]
    targets = _targets(model, module_types)
    if not targets:
        raise GpudashError(
            f"gradient checkpointing: {type(model).__name__} has no nn.ModuleList of blocks to checkpoint; "
            "pass module_types=(YourBlock,)"
        )
    for _name, module in targets:
        if not hasattr(module, _ORIGINAL):
            setattr(module, _ORIGINAL, module.forward)
            module.forward = _checkpointed_forward(module, getattr(module, _ORIGINAL))
    return [name for name, _ in targets]
