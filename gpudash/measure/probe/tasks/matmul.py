"""Matmul per precision against an fp64 reference computed on the CPU without BLAS.

Error measure: |out - ref| / (|A| @ |B|), elementwise, maximum taken. The denominator is the sum of the
magnitudes of the products, the quantity the standard dot-product error bound scales with; unlike
|out - ref| / |ref| it does not blow up on an output element that happens to be near zero. The
reference uses the operands exactly as the device received them (already rounded to the dtype), so the
tolerance only has to cover accumulation and the rounding of the output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from gpudash.measure.probe.tasks import formats, timing

# M odd (tail rows); K and N multiples of 16 (torch._scaled_mm) and of 8 (torch._int_mm needs M > 16 too).
SHAPE = (129, 256, 112)
# Rates are compared at a larger shape: at SHAPE a GPU is launch-bound and a CPU's ratios still drift.
CPU_TIMING_SHAPE = (256, 256, 256)
GPU_TIMING_SHAPE = (2048, 2048, 2048)

# Tolerances on the error measure above (see docs/precision-probes.md for the reasoning).
TOLERANCE = {
    "fp64": 1e-12,  # K * 2^-53 is 3e-14 at K = 256
    "fp32": 1e-5,  # K * 2^-24 worst case; TF32 silently in use lands near 1e-4 and fails
    "fp16": 4e-3,  # 8 half-ulps of fp16 (2^-11): output rounding plus reduced-precision reductions
    "bf16": 3e-2,  # 8 half-ulps of bf16 (2^-8)
    "fp8_e4m3": 2e-3,  # fp32 output; fp8 tensor cores accumulate with fewer bits than fp32
    "fp8_e5m2": 2e-3,
    "int8": 0.0,  # int32 accumulation is exact at these sizes
    "fp4": 3e-2,  # bf16 output
}
TORCH_DTYPE = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
FP4_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # e2m1 magnitudes, codes 0..7; bit 3 is the sign


def device_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The plain matmul under test (fp64, fp32, fp16, bf16)."""
    return a @ b


def scaled_mm(a, b, scale_a, scale_b, out_dtype):
    """torch._scaled_mm, the fp8 (and fp4) matmul under test."""
    return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype)


def int_mm(a, b):
    """torch._int_mm, the int8 matmul under test (int32 output)."""
    return torch._int_mm(a, b)


@dataclass
class Case:
    run: Callable[[], torch.Tensor]  # the device computation
    a64: torch.Tensor  # the operands exactly as the device sees them, as CPU float64 (A is M x K, B is K x N)
    b64: torch.Tensor
    describe: str


def _randn(shape, gen) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float32)


def exact64(x: torch.Tensor) -> torch.Tensor:
    """A CPU tensor's exact values as float64, decoded from its bits for the small float formats."""
    name = str(x.dtype).removeprefix("torch.")
    fmt = formats.FORMATS.get(name)
    if fmt is None:
        return x.to(torch.float64)
    return formats.decode(formats.codes_of(x, fmt), fmt).reshape(x.shape)


def plain_case(precision: str, shape, device: str, gen) -> Case:
    m, k, n = shape
    dtype = getattr(torch, TORCH_DTYPE[precision])
    a = _randn((m, k), gen).to(dtype)
    w = _randn((n, k), gen).to(dtype)  # B as nn.Linear holds it: a row-major weight, used transposed
    a_d, b_d = a.to(device), w.to(device).t()
    # The layout decides the speed: fp16 on a CPU without AVX512-FP16 is ~20x slower with B row-major.
    return Case(lambda: device_matmul(a_d, b_d), exact64(a), exact64(w).t(), f"{dtype} @ {dtype}.T -> {dtype}")


def int8_case(shape, device: str, gen) -> Case:
    m, k, n = shape
    a = torch.randint(-128, 128, (m, k), generator=gen, dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), generator=gen, dtype=torch.int8)
    a_d, b_d = a.to(device), b.to(device)
    return Case(
        lambda: int_mm(a_d, b_d), a.to(torch.float64), b.to(torch.float64), "torch._int_mm int8 @ int8 -> int32"
    )


def _quantise(x: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, float]:
    """Per-tensor quantisation: x / scale fills the dtype's range; returns (codes, dequant scale)."""
    scale = float(x.abs().max()) / float(torch.finfo(dtype).max)
    return (x / scale).to(dtype), scale


def fp8_case(dtype_a: str, dtype_b: str, shape, device: str, gen) -> Case:
    """A (row-major) times B (column-major, as cuBLASLt requires), fp32 per-tensor dequant scales."""
    m, k, n = shape
    fa, fb = getattr(torch, dtype_a), getattr(torch, dtype_b)
    a, sa = _quantise(_randn((m, k), gen), fa)
    bt, sb = _quantise(_randn((n, k), gen), fb)  # stored N x K, passed as its transpose
    a_d, bt_d = a.to(device), bt.to(device)
    sa_d = torch.tensor(sa, dtype=torch.float32, device=device)
    sb_d = torch.tensor(sb, dtype=torch.float32, device=device)
    return Case(
        lambda: scaled_mm(a_d, bt_d.t(), sa_d, sb_d, torch.float32),
        exact64(a) * sa,
        exact64(bt).t() * sb,
        f"torch._scaled_mm {dtype_a} @ {dtype_b} (column-major), fp32 tensor-wise scales -> float32",
    )


def _fp4_operand(rows: int, k: int, gen) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed fp4 (rows x k/2 bytes) whose two nibbles per byte are equal, so the packing order cannot
    matter, and its exact values (rows x k)."""
    nibble = torch.randint(0, 16, (rows, k // 2), generator=gen, dtype=torch.int64)
    packed = (nibble | (nibble << 4)).to(torch.uint8).view(torch.float4_e2m1fn_x2)
    mags = torch.tensor(FP4_VALUES, dtype=torch.float64)[nibble & 7]
    values = torch.where((nibble & 8).bool(), -mags, mags)
    return packed, values.repeat_interleave(2, dim=1)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def fp4_case(shape, device: str, gen) -> Case:
    """NVFP4 layout: e2m1 pairs, one float8_e4m3fn scale per 16 values, padded to 128-row tiles. All
    scales are 1.0, so the swizzled scale layout cannot change the result."""
    m, k, n = shape
    a, a64 = _fp4_operand(m, k, gen)
    bt, bt64 = _fp4_operand(n, k, gen)
    k_blocks = _round_up(_round_up(k, 16) // 16, 4)
    scale_a = torch.ones(_round_up(m, 128), k_blocks).to(torch.float8_e4m3fn).to(device)
    scale_b = torch.ones(_round_up(n, 128), k_blocks).to(torch.float8_e4m3fn).to(device)
    a_d, bt_d = a.to(device), bt.to(device)
    return Case(
        lambda: scaled_mm(a_d, bt_d.t(), scale_a, scale_b, torch.bfloat16),
        a64,
        bt64.t(),
        "torch._scaled_mm float4_e2m1fn_x2 @ float4_e2m1fn_x2, float8_e4m3fn 1x16 block scales -> bfloat16",
    )


def make_case(precision: str, shape, device: str, fp8: dict[str, str], seed: int = 0) -> Case:
    gen = torch.Generator().manual_seed(seed)
    if precision in TORCH_DTYPE:
        return plain_case(precision, shape, device, gen)
    if precision == "int8":
        return int8_case(shape, device, gen)
    if precision == "fp8_e4m3":
        return fp8_case(fp8["e4m3"], fp8["e4m3"], shape, device, gen)
    if precision == "fp8_e5m2":  # e5m2 x e5m2 is rejected on CUDA; the hybrid recipe pairs it with e4m3
        return fp8_case(fp8["e5m2"], fp8["e4m3"], shape, device, gen)
    if precision == "fp4":
        return fp4_case(shape, device, gen)
    raise ValueError(f"no matmul probe for {precision}")


def reference(a64: torch.Tensor, b64: torch.Tensor, rows: int = 16) -> torch.Tensor:
    """A @ B in float64 by broadcast multiply and sum, a few rows at a time: no BLAS, so a broken BLAS
    cannot hide behind its own reference."""
    return torch.cat([(a64[i : i + rows, :, None] * b64[None]).sum(dim=1) for i in range(0, a64.shape[0], rows)])


def compare(out: torch.Tensor, a64: torch.Tensor, b64: torch.Tensor, tolerance: float) -> dict:
    """Error and the zero/NaN/Inf flags of one output; `reason` says what is wrong, or None."""
    ref = reference(a64, b64)
    scale = reference(a64.abs(), b64.abs())
    got = out.detach().to("cpu").to(torch.float64)
    nan = torch.isnan(got)
    inf = torch.isinf(got)
    err = (got - ref).abs()
    finite = ~(nan | inf)
    rel = torch.where(scale > 0, err / scale.clamp_min(1e-300), torch.where(err > 0, torch.inf, 0.0))
    max_rel = float(rel[finite].max()) if finite.any() else float("inf")
    max_abs = float(err[finite].max()) if finite.any() else float("inf")
    total = got.numel()
    wrong_zero = (got == 0) & (ref != 0) & (rel > tolerance)
    result: dict[str, Any] = {
        "max_rel_error": max_rel,
        "max_abs_error": max_abs,
        "tolerance": tolerance,
        "frac_nan": float(nan.sum()) / total,
        "frac_inf": float(inf.sum()) / total,
        "frac_zero": float((got == 0).sum()) / total,
        "frac_zero_expected": float((ref == 0).sum()) / total,
        "reason": None,
    }
    if nan.any():
        result["reason"] = f"{_pct(nan.sum(), total)} of the outputs are NaN (the reference has none)"
    elif inf.any():
        result["reason"] = f"{_pct(inf.sum(), total)} of the outputs are Inf (the reference is finite)"
    elif wrong_zero.any():
        result["reason"] = (
            f"{_pct(wrong_zero.sum(), total)} of the outputs are zero where the reference is not "
            f"(max relative error {max_rel:.3g})"
        )
    elif max_rel > tolerance:
        result["reason"] = f"max relative error {max_rel:.3g} is above the tolerance {tolerance:g}"
    return result


def _pct(count, total: int) -> str:
    share = 100.0 * float(count) / total
    return f"{share:.0f}%" if share >= 1 else f"{share:.2g}%"


def check_matmul(device: str, precision: str, fp8: dict[str, str]) -> dict:
    """Correctness at SHAPE, then this precision's rate against fp32's, timed in alternation."""
    case = make_case(precision, SHAPE, device, fp8)
    with fp32_matmul_precision("highest"):  # fp32 means IEEE fp32 here; TF32 has its own probe
        out = case.run()
        timing.synchronize(device)
    result: dict[str, Any] = {"check": "matmul", "op": case.describe, "shape": list(SHAPE)}
    result.update(compare(out, case.a64, case.b64, TOLERANCE[precision]))
    result["ok"] = result["reason"] is None
    result.update(rate_vs_fp32(device, precision, fp8))
    return result


def timing_shape(device: str) -> tuple[int, int, int]:
    return GPU_TIMING_SHAPE if device.startswith("cuda") else CPU_TIMING_SHAPE


def rate_vs_fp32(device: str, precision: str, fp8: dict[str, str]) -> dict:
    """GFLOPS (GOPS for int8) of this precision and of fp32 at the same shape, in the same loop."""
    shape = timing_shape(device)
    case = make_case(precision, shape, device, fp8, seed=1)
    fp32 = plain_case("fp32", shape, device, torch.Generator().manual_seed(2))
    flops = 2.0 * shape[0] * shape[1] * shape[2]
    with fp32_matmul_precision("highest"):
        pair = timing.paired(case.run, fp32.run, device)
    own, base = flops / pair.first_s / 1e9, flops / pair.second_s / 1e9
    low, high = pair.ratio_range()
    return {
        "timing_shape": list(shape),
        "gflops": own,
        "fp32_gflops": base,
        "rate_vs_fp32": own / base,
        "rate_range": [low, high],
        "rate_basis": pair.basis,
        "timing_rounds": pair.rounds,
        "undisturbed_rounds": pair.undisturbed,
    }


class fp32_matmul_precision:
    """torch.set_float32_matmul_precision for a block, restored afterwards."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __enter__(self):
        self.saved = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision(self.mode)
        return self

    def __exit__(self, *exc) -> None:
        torch.set_float32_matmul_precision(self.saved)
