"""Adaptive kernels: the built-in matmul kernels, the dispatcher that picks one, and a benchmark of it.

Training code uses `gpudash.ops` (matmul, matmul_with_info, AdaptiveLinear, AdaptiveAttention), which stands
on this dispatcher run over the kernels of every plugin source: these built-ins and whatever other plugins,
installed or one-file, register through the `register_kernels` hook (gpudash.ops.collect_kernels). Which of
the kernels that can run may run is gpudash's decision (gpudash.amp.kernel_precision), the answer
AmpConfig.auto() and `gpudash export` give. The names below are kept for code that imported them from here:

    from gpudash_plugins.adaptive_kernels import matmul, matmul_with_info

The kernel rules are in `kernels.py`, the dispatcher in `dispatch.py`, the benchmark in `benchmark.py`.
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
