"""Adaptive kernels: matmul with the best kernel the device's architecture supports.

    from gpudash_plugins.adaptive_kernels import AdaptiveLinear, matmul, matmul_with_info

    y = matmul(x, w)                      # x @ w.T, in x's dtype
    y, kernel = matmul_with_info(x, w)    # kernel: "bf16", "fp8_e4m3fn_scaled_mm", ...
    layer = AdaptiveLinear(512, 256)      # a drop-in nn.Linear

The kernel rules are in `kernels.py`; other plugins add kernels through the `register_kernels` hook.
Importing this package does not import torch; AdaptiveLinear does, on first use.
"""

from __future__ import annotations

from .dispatch import Dispatcher, default_dispatcher, matmul, matmul_with_info
from .kernels import BUILTIN_KERNELS


def __getattr__(name: str):
    if name == "AdaptiveLinear":  # imports torch: only when asked for
        from .linear import AdaptiveLinear

        return AdaptiveLinear
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BUILTIN_KERNELS", "AdaptiveLinear", "Dispatcher", "default_dispatcher", "matmul", "matmul_with_info"]
