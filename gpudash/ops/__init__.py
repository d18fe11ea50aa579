"""Operations for training code that adapt to the device, and the system summary they decide from.

    from gpudash.ops import matmul, matmul_with_info, AdaptiveLinear, AdaptiveAttention
    y = matmul(x, w)                          # x @ w.T with the best kernel the device's rules allow
    y, kernel = matmul_with_info(x, w)        # ... and the kernel's name ("bf16", "fp32", ...)
    layer = AdaptiveLinear(512, 256)          # a drop-in nn.Linear
    attention = AdaptiveAttention(512, 8)     # self-attention through scaled_dot_product_attention
    from gpudash.ops import SYSTEM_CONFIG, print_system_info
    SYSTEM_CONFIG.has_fp8_support, SYSTEM_CONFIG.architecture, SYSTEM_CONFIG.optimal_dtype

Kernels come from every plugin source: the entry points (gpudash's adaptive_kernels plugin among them) and the
one-file plugins of the plugin directories (the config file's `plugin_dirs`, or `use_plugin_dirs(...)`).
fp8 runs only when the caller opts in (`allow_fp8=True`): per-tensor scaled fp8 changes results by a few
percent, which no caller should get by surprise. Everything here is imported on first use: importing
gpudash.ops imports neither torch nor a plugin.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpudash.ops.kernel_sources import collect_kernels, use_plugin_dirs

# name -> the submodule that defines it (imported on first use: torch, the plugin, device discovery)
_LAZY = {
    "matmul": "dispatching",
    "matmul_with_info": "dispatching",
    "default_dispatcher": "dispatching",
    "Dispatcher": "dispatching",
    "is_fp8": "dispatching",
    "AdaptiveLinear": "linear",
    "AdaptiveAttention": "attention",
    "SystemConfig": "system",
    "system_config": "system",
    "print_system_info": "system",
}


def __getattr__(name: str) -> Any:
    if name == "SYSTEM_CONFIG":  # the seed's module-level object, computed when first read
        return importlib.import_module(f"{__name__}.system").system_config()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY, "SYSTEM_CONFIG"])


__all__ = [
    "SYSTEM_CONFIG",
    "AdaptiveAttention",
    "AdaptiveLinear",
    "Dispatcher",
    "SystemConfig",
    "collect_kernels",
    "default_dispatcher",
    "is_fp8",
    "matmul",
    "matmul_with_info",
    "print_system_info",
    "system_config",
    "use_plugin_dirs",
]
