"""The bf16 plan's utilities, under its names, answering through gpudash's decisions.

    get_bf16_capability(device) -> Bf16Capability   supported, why, the device, what the tables and probe say
    detect_bf16_support(device) -> (bool, reason)   does the device *support* bf16: native by the tables, and
                                                    not found broken where a probe or check looked
    get_optimal_dtype(device) / get_amp_dtype_for_device(device)   the dtype AmpConfig.auto() chooses
    is_bf16_tensor(t), safe_to_bf16(t), print_bf16_status(device)

Where the plan was wrong about hardware, these follow the tables (docs/api.md lists the differences): support is
not "compute capability >= 8.0" (AMD CDNA/RDNA3+/RDNA4 and AVX512-BF16/AMX CPUs have bf16; Turing has none at all,
not "limited"), and supporting bf16 is not the same as choosing it (a CPU chooses bf16 only when measured faster,
RDNA3 only once a live probe verified it correct and faster).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, TextIO

from gpudash.amp.config import AmpConfig, dtype_name
from gpudash.amp.evidence import gather
from gpudash.knowledge.nvidia import parse_cc


@dataclass(frozen=True)
class Bf16Capability:
    supported: bool  # native by the tables, and not found broken where a probe or check looked
    reason: str
    gpu_name: str  # the plan's field name: the device's name (a CPU's too)
    compute_capability: tuple[int, int]  # (0, 0) where there is none (AMD, CPU), as the plan reports unknown
    device: str  # "cpu" | "cuda:N"
    device_key: str  # gpudash's key, "nvidia:0"
    arch: str  # "Hopper", "RDNA3", "Zen 5", ...
    spec: str  # "native" | "emulated" | "absent" by the tables
    verified: bool | None  # the probe's verdict here (None: not probed, or replayed)
    caution: str | None  # the tables' caution on bf16 for this architecture, with its sources
    optimal_dtype: str  # what AmpConfig.auto() / get_optimal_dtype() chooses here
    dtype_reason: str
    gfx_target: str | None = None


def get_bf16_capability(device: Any = None, use_verified: bool = True, machine: Any = None) -> Bf16Capability:
    from gpudash.recommend import decisions

    ev = gather(device, use_verified, machine)
    verdict = decisions.bf16_support(ev.facts)
    choice = decisions.amp_dtype(ev.facts)
    result = ev.result("bf16")
    return Bf16Capability(
        supported=verdict.ok,
        reason=f"{ev.label}: {verdict.reason}",
        gpu_name=ev.device.name,
        compute_capability=parse_cc(ev.device.compute_capability) or (0, 0),
        device=ev.torch_device,
        device_key=ev.device.key,
        arch=ev.facts.arch.family,
        spec=ev.facts.arch.precisions.get("bf16", "absent"),
        verified=None if result is None else result.verified,
        caution=ev.facts.arch.cautions.get("bf16"),
        optimal_dtype=choice.dtype,
        dtype_reason=choice.reason,
        gfx_target=ev.device.gfx_target,
    )


def detect_bf16_support(device: Any = None, use_verified: bool = True, machine: Any = None) -> tuple[bool, str]:
    """(the device supports bf16, why): the tables' answer, and the probe's where one ran. Whether training
    should use bf16 is get_optimal_dtype's question."""
    cap = get_bf16_capability(device, use_verified, machine)
    return cap.supported, cap.reason


def get_optimal_dtype(device: Any = None, use_verified: bool = True, machine: Any = None):
    """torch.bfloat16, torch.float16 or torch.float32, as AmpConfig.auto() (and `gpudash export`) decides."""
    return AmpConfig.auto(device, use_verified, machine).dtype


def get_amp_dtype_for_device(device: Any = None, machine: Any = None):
    """The autocast dtype for `device` (a torch.device, "cuda:1", "cpu", ...): the same answer as
    get_optimal_dtype; a CPU gets bf16 only where bf16 is native and measured faster than fp32."""
    return get_optimal_dtype(device, machine=machine)


def is_bf16_tensor(tensor: Any) -> bool:
    import torch

    return isinstance(tensor, torch.Tensor) and tensor.dtype == torch.bfloat16


def safe_to_bf16(tensor: Any):
    """`tensor` as bfloat16: floats convert directly (bf16 keeps fp32's exponent range, so only fp64 beyond
    3.4e38 overflows), integers and bools through float32. Complex tensors are refused: casting would drop
    the imaginary part."""
    import torch

    if tensor.is_complex():
        raise TypeError(f"safe_to_bf16: a {dtype_name(tensor.dtype)} tensor has no bfloat16 form (complex)")
    if tensor.dtype == torch.bfloat16:
        return tensor
    if tensor.is_floating_point():
        return tensor.to(torch.bfloat16)
    return tensor.to(torch.float32).to(torch.bfloat16)


def print_bf16_status(device: Any = None, file: TextIO | None = None, machine: Any = None) -> Bf16Capability:
    """Print the bf16 status block (the plan's layout, with gpudash's evidence); returns what it printed."""
    cap = get_bf16_capability(device, machine=machine)
    out = file or sys.stdout
    rule = "=" * 50
    lines = ["", rule, "BF16 Capability Status", rule, f"Device: {cap.gpu_name} ({cap.device_key}, {cap.device})"]
    if cap.compute_capability != (0, 0):
        lines.append(f"Compute Capability: {cap.compute_capability[0]}.{cap.compute_capability[1]}")
    if cap.gfx_target:
        lines.append(f"Target: {cap.gfx_target}")
    lines += [
        f"Architecture: {cap.arch}; bf16 by the tables: {cap.spec}",
        f"Probe: {'not run' if cap.verified is None else 'verified' if cap.verified else 'failed'}",
        f"BF16 Supported: {cap.supported}",
        f"Reason: {cap.reason}",
    ]
    if cap.caution:
        lines.append(f"Caution: {cap.caution}")
    lines += [f"Optimal dtype: torch.{cap.optimal_dtype}", f"Why: {cap.dtype_reason}", rule, ""]
    print("\n".join(lines), file=out)
    return cap
