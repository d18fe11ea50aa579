"""Kernels for the adaptive dispatcher (the register_kernels hook): Kernel, the KernelQuery its predicate sees.

Gathering every plugin's kernels needs the plugin manager: `gpudash.ops.collect_kernels` does it.
"""

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
