"""The reference transformer and the training step used to size batches (child-process code: imports torch).

Also loads a user's model from a "module:function" factory returning (model, sample_batch), and turns any
sample batch into a batch of n samples by cycling its rows.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

DTYPES = ("float32", "bfloat16", "float16")


def build_reference(spec: dict[str, Any], device=None):
    """(model, make_batch) for the GPT-style reference model of model_spec.py."""
    import torch
    from torch import nn

    class Reference(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            h = spec["hidden"]
            self.tok = nn.Embedding(spec["vocab"], h, device=device)
            self.pos = nn.Embedding(spec["seq_len"], h, device=device)
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(
                    h,
                    spec["heads"],
                    4 * h,
                    dropout=0.0,
                    activation="gelu",
                    batch_first=True,
                    norm_first=True,
                    device=device,
                )
                for _ in range(spec["layers"])
            )
            self.norm = nn.LayerNorm(h, device=device)
            self.head = nn.Linear(h, spec["vocab"], bias=False, device=device)
            self.head.weight = self.tok.weight  # tied, as in GPT-2

        def forward(self, idx):
            n = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(n, device=idx.device))
            mask = nn.Transformer.generate_square_subsequent_mask(n, device=idx.device)
            for block in self.blocks:
                x = block(x, src_mask=mask, is_causal=True)
            logits = self.head(self.norm(x))
            # next-token loss in fp32 (autocast would otherwise keep the logits in 16 bits)
            return nn.functional.cross_entropy(
                logits[:, :-1].float().reshape(-1, logits.size(-1)), idx[:, 1:].reshape(-1)
            )

    model = Reference()

    def make_batch(n: int):
        return torch.randint(0, spec["vocab"], (n, spec["seq_len"]), device=device)

    return model, make_batch


def load_factory(target: str) -> Callable[[], Any]:
    module_name, _, func = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), func)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"model.factory {target!r}: {exc}") from None


def build_factory(target: str, device=None):
    """(model, make_batch) from a user's factory; the model and batch are moved to `device` if given."""
    made = load_factory(target)()
    if not (isinstance(made, (tuple, list)) and len(made) == 2):
        raise ValueError(f"model.factory {target!r} must return (model, sample_batch)")
    model, sample = made
    if device is not None:
        model = model.to(device)
        sample = _map_tensors(sample, lambda t: t.to(device))
    return model, lambda n: resize_batch(sample, n)


def build(spec: dict[str, Any], device=None):
    if spec["kind"] == "factory":
        return build_factory(spec["factory"], device)
    return build_reference(spec, device)


def _map_tensors(batch, fn):
    import torch

    if isinstance(batch, torch.Tensor):
        return fn(batch)
    if isinstance(batch, (tuple, list)):
        return type(batch)(_map_tensors(b, fn) for b in batch)
    if isinstance(batch, dict):
        return {k: _map_tensors(v, fn) for k, v in batch.items()}
    return batch


def resize_batch(sample, n: int):
    """n samples, cycling the rows of the sample batch (dimension 0 is the batch)."""
    import torch

    def pick(t):
        rows = torch.arange(n, device=t.device) % t.shape[0]
        return t.index_select(0, rows)

    return _map_tensors(sample, pick)


def loss_of(model, batch):
    """Run the model on a batch and reduce its output to a scalar loss."""
    import torch

    if isinstance(batch, dict):
        out = model(**batch)
    elif isinstance(batch, (tuple, list)):
        out = model(*batch)
    else:
        out = model(batch)
    if hasattr(out, "loss") and out.loss is not None:  # Hugging Face model outputs
        out = out.loss
    if isinstance(out, (tuple, list)):
        out = out[0]
    if not isinstance(out, torch.Tensor):
        raise ValueError(f"the model returned {type(out).__name__}, not a tensor")
    return out if out.numel() == 1 else out.float().mean()


def autocast(device_type: str, dtype: str):
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}")
    return torch.autocast(device_type, dtype=getattr(torch, dtype), enabled=dtype != "float32")
