"""The built-in matmul kernels, one per compute precision, each with the rule that says the hardware can run it.

A kernel here computes x @ w.T for a 2-D x (M, K) and w (N, K), and returns (M, N) in x's dtype. The rules
read the architecture facts from gpudash's reference tables (`arch_of`), not a hand-written list of GPU names,
which wrongly calls compute capability 9.0 Blackwell: 9.0 is Hopper (H100/H200); Blackwell is 10.x and 12.x.
Which of the kernels that *can* run *may* run is not decided here: the dispatcher asks gpudash's decision
(gpudash.amp.kernel_precision, the same answer AmpConfig.auto() and `gpudash export` give), so a bf16 or fp16
kernel runs only where training would autocast to that dtype, and fp8 only where the fp8 decision allows it.

  fp8 (scaled _scaled_mm)  parts with native fp8: cc 8.9 and up; gfx942 with the FNUZ dtypes; gfx950 and
                           RDNA4 (gfx1200/gfx1201) with the OCP dtypes (ROCm >= 6.5, part of the fp8
                           decision). Inference only (no autograd through _scaled_mm); K and N must be
                           multiples of 16.
  bf16                     native bf16: Ampere and later, CDNA, RDNA3+, CPUs with AVX512-BF16 or AMX-BF16.
  fp16                     native fp16 on a GPU (the decision picks it where bf16 is absent or cautioned:
                           Volta, Turing with tensor cores, RDNA3/RDNA3.5 until a probe clears their bf16).
  fp32                     everything else, and the fallback when a faster kernel fails at run time.
"""

from __future__ import annotations

from gpudash.plugins_api import Kernel, KernelQuery


def _gpu(q: KernelQuery) -> bool:
    return q.device.vendor in ("nvidia", "amd")


def _fp8_shapes_ok(q: KernelQuery) -> bool:
    (_, k), (n, _) = q.shapes[0], q.shapes[1]
    return k % 16 == 0 and n % 16 == 0  # _scaled_mm's alignment rule


def _fp8(q: KernelQuery, dtype_name: str) -> bool:
    if not (_gpu(q) and q.arch.is_native("fp8_e4m3") and q.arch.fp8_dtype == dtype_name):
        return False
    return not q.requires_grad and _fp8_shapes_ok(q)


def wants_fp8_fnuz(q: KernelQuery) -> bool:
    return _fp8(q, "float8_e4m3fnuz")


def wants_fp8_ocp(q: KernelQuery) -> bool:
    return _fp8(q, "float8_e4m3fn")


def wants_bf16(q: KernelQuery) -> bool:
    return q.arch.is_native("bf16")


def wants_fp16(q: KernelQuery) -> bool:
    return _gpu(q) and q.arch.is_native("fp16")


def always(q: KernelQuery) -> bool:
    return True


def _cast_matmul(dtype_name: str):
    def matmul_in(x, w):
        import torch

        dtype = getattr(torch, dtype_name)
        return torch.matmul(x.to(dtype), w.to(dtype).t()).to(x.dtype)

    matmul_in.__name__ = f"matmul_{dtype_name}"
    return matmul_in


def _scaled_fp8_matmul(dtype_name: str):
    def matmul_fp8(x, w):
        """Per-tensor scaled fp8: quantise both operands to the fp8 range, multiply, dequantise in the GEMM."""
        import torch

        f8 = getattr(torch, dtype_name)
        top = torch.finfo(f8).max
        xf, wf = x.float(), w.float()
        scale_x = (xf.abs().amax().clamp(min=1e-12) / top).float()  # dequantisation scales, as _scaled_mm wants
        scale_w = (wf.abs().amax().clamp(min=1e-12) / top).float()
        xq = (xf / scale_x).to(f8).contiguous()
        wq = (wf / scale_w).to(f8).contiguous()
        out = x.dtype if x.dtype in (torch.float32, torch.bfloat16, torch.float16) else torch.float32
        # mat2 must be column-major: wq is (N, K) row-major, so wq.t() is (K, N) column-major.
        return torch._scaled_mm(xq, wq.t(), scale_a=scale_x, scale_b=scale_w, out_dtype=out).to(x.dtype)

    matmul_fp8.__name__ = f"matmul_{dtype_name}"
    return matmul_fp8


FP8_FNUZ = Kernel(
    "matmul",
    "fp8_e4m3fnuz_scaled_mm",
    "fp8_e4m3",
    wants_fp8_fnuz,
    _scaled_fp8_matmul("float8_e4m3fnuz"),
    priority=40,
    description="per-tensor scaled fp8 e4m3 (FNUZ dtypes) where the part has fp8: gfx942 (MI300)",
)
FP8_OCP = Kernel(
    "matmul",
    "fp8_e4m3fn_scaled_mm",
    "fp8_e4m3",
    wants_fp8_ocp,
    _scaled_fp8_matmul("float8_e4m3fn"),
    priority=40,
    description="per-tensor scaled fp8 e4m3 (OCP dtypes): cc 8.9+, gfx950, gfx1200/gfx1201",
)
BF16 = Kernel(
    "matmul",
    "bf16",
    "bf16",
    wants_bf16,
    _cast_matmul("bfloat16"),
    priority=30,
    description="bf16 where the hardware has it and gpudash's AMP decision is bf16 (Ampere+, CDNA, RDNA4, ...)",
)
FP16 = Kernel(
    "matmul",
    "fp16",
    "fp16",
    wants_fp16,
    _cast_matmul("float16"),
    priority=20,
    description="fp16 where gpudash's AMP decision is fp16 (Volta/Turing tensor cores, RDNA3 WMMA, ...)",
)
FP32 = Kernel(
    "matmul",
    "fp32",
    "fp32",
    always,
    _cast_matmul("float32"),
    priority=0,
    description="fp32 everywhere else; the fallback",
)

BUILTIN_KERNELS = (FP8_FNUZ, FP8_OCP, BF16, FP16, FP32)
