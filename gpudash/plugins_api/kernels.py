"""Kernels for the adaptive dispatcher (the register_kernels hook): Kernel, the KernelQuery its predicate sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpudash.plugins_api.arch import Arch
from gpudash.plugins_api.devices import Device


@dataclass(frozen=True)
class KernelQuery:
    """What a kernel predicate sees: the device, its facts, and the call's operand shapes."""

    device: Device
    arch: Arch
    shapes: tuple[tuple[int, ...], ...]  # operand shapes, e.g. ((M, K), (N, K)) for matmul(x, w)
    dtype: str = "float32"  # the operands' torch dtype name
    requires_grad: bool = False  # autograd will need a backward pass through the result


@dataclass(frozen=True)
class Kernel:
    """One implementation of an operation, chosen when `predicate(query)` is true (highest priority first)."""

    op: str  # "matmul"
    name: str  # "bf16", "fp8_e4m3fn_scaled_mm", ...
    precision: str  # the gpudash precision it computes in
    predicate: Callable[[KernelQuery], bool]
    implementation: Callable[..., Any]
    priority: int = 0
    description: str = ""


def collect_kernels(op: str | None = None) -> list[Kernel]:
    """Kernels every loaded plugin registers through `register_kernels` (entry points; GPUDASH_LOAD_PLUGINS
    applies). Load errors go to stderr. Cached per process."""
    from gpudash.plugin_manager import kernels_from_plugins  # the manager imports this API: import it late

    return [k for k in kernels_from_plugins() if op is None or k.op == op]
