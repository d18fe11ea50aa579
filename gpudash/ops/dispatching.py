"""matmul through the adaptive dispatcher, over the kernels of every plugin source, with fp8 only on request.

The dispatcher and its kernel rules are the adaptive_kernels plugin's (gpudash_plugins.adaptive_kernels): the
same rules its benchmark measures. What this module adds is the public contract of gpudash.ops:

- kernels from entry points *and* plugin directories (gpudash.ops.kernel_sources);
- fp8 kernels (any kernel whose precision is an fp8 one, built-in or a plugin's) only with `allow_fp8=True`.
  The built-in fp8 kernel scales each operand by one factor (per-tensor): on the seed's 8x1024x512 example its
  result is 3.7e-2 away from fp32 (relative Frobenius error), bf16's 2.9e-3 (benchmarks/ops_speed.py,
  docs/performance.md). That is a choice for the caller.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from gpudash.ops import kernel_sources
from gpudash.plugins_api import Kernel
from gpudash_plugins.adaptive_kernels.dispatch import Dispatcher
from gpudash_plugins.adaptive_kernels.kernels import BUILTIN_KERNELS

_defaults: dict[tuple[bool, int], Dispatcher] = {}
_without_fp8: weakref.WeakKeyDictionary[Dispatcher, Dispatcher] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def is_fp8(kernel: Kernel) -> bool:
    """A kernel that computes in an fp8 precision ("fp8_e4m3", "fp8_e5m2")."""
    return kernel.precision.startswith("fp8")


def default_dispatcher(allow_fp8: bool = False) -> Dispatcher:
    """The built-in kernels plus every plugin's (entry points and plugin directories), fp8 ones only when
    `allow_fp8`. One per process and setting, rebuilt after `use_plugin_dirs`."""
    key = (allow_fp8, kernel_sources.generation())
    with _lock:
        found = _defaults.get(key)
    if found is not None:
        return found
    kernels = [*BUILTIN_KERNELS, *kernel_sources.collect_kernels("matmul")]  # outside the lock: loads plugins
    dispatcher = Dispatcher([k for k in kernels if allow_fp8 or not is_fp8(k)])
    with _lock:
        return _defaults.setdefault(key, dispatcher)


def for_call(dispatcher: Dispatcher | None, allow_fp8: bool) -> Dispatcher:
    """The dispatcher a call uses: the default one, or the caller's less its fp8 kernels unless allowed."""
    if dispatcher is None:
        return default_dispatcher(allow_fp8)
    if allow_fp8 or not any(is_fp8(k) for k in dispatcher.kernels):
        return dispatcher
    with _lock:
        derived = _without_fp8.get(dispatcher)
        if derived is None:
            derived = _without_fp8[dispatcher] = Dispatcher([k for k in dispatcher.kernels if not is_fp8(k)])
        return derived


def matmul_with_info(
    x: Any, w: Any, *, allow_fp8: bool = False, dispatcher: Dispatcher | None = None
) -> tuple[Any, str]:
    """x @ w.T (x: (..., K), w: (N, K), nn.Linear's layout) in x's dtype, and the name of the kernel that ran
    ("bf16", "fp16", "fp32", a plugin's kernel, or with allow_fp8 "fp8_e4m3fn_scaled_mm" ...)."""
    return for_call(dispatcher, allow_fp8).matmul_with_info(x, w)


def matmul(x: Any, w: Any, *, allow_fp8: bool = False, dispatcher: Dispatcher | None = None) -> Any:
    """x @ w.T with the best kernel the device's architecture supports; the result has x's dtype."""
    return for_call(dispatcher, allow_fp8).matmul_with_info(x, w)[0]


__all__ = ["Dispatcher", "default_dispatcher", "for_call", "is_fp8", "matmul", "matmul_with_info"]
