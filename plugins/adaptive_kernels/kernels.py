"""The built-in matmul kernels, one per compute precision, each with the rule that selects it.

A kernel here computes x @ w.T for a 2-D x (M, K) and w (N, K), and returns (M, N) in x's dtype. The rules
read the architecture facts from gpudash's reference tables (`arch_of`), not a hand-written list of GPU names,
which wrongly calls compute capability 9.0 Blackwell: 9.0 is Hopper (H100/H200); Blackwell is 10.x and 12.x.

  fp8 (scaled _scaled_mm)  parts with native fp8: cc 8.9 and up; gfx942 with the FNUZ dtypes; gfx950 and
                           RDNA4 (gfx1200/gfx1201) with the OCP dtypes (ROCm >= 6.5). Inference only (no
                           autograd through _scaled_mm); K and N must be multiples of 16.
  bf16                     native bf16: Ampere and later, CDNA, RDNA4; CPUs with AVX512-BF16 or AMX-BF16.
  fp16                     Volta and Turing (fp16 tensor cores, no bf16), and RDNA3/RDNA3.5, whose bf16 has
                           known correctness problems (pytorch#189394; ROCm/legacy-rocm-build#6034).
  fp32                     everything else, and the fallback when a faster kernel fails at run time.
"""

from __future__ import annotations

from gpudash.plugins_api import Kernel, KernelQuery

FP16_FAMILIES = frozenset({"Volta", "Turing"})
BF16_TROUBLED_FAMILIES = frozenset({"RDNA3", "RDNA3.5"})
OCP_FP8_MIN_ROCM = (6, 5)  # _scaled_mm with OCP fp8 on gfx950/gfx120x (PyTorch ScaledBlasDeviceUtils.cpp)


def _gpu(q: KernelQuery) -> bool:
    return q.device.vendor in ("nvidia", "amd")


def _fp8_shapes_ok(q: KernelQuery) -> bool:
    (_, k), (n, _) = q.shapes[0], q.shapes[1]
    return k % 16 == 0 and n % 16 == 0  # _scaled_mm's alignment rule


def _fp8(q: KernelQuery, dtype_name: str) -> bool:
    if not (_gpu(q) and q.arch.is_native("fp8_e4m3") and q.arch.fp8_dtype == dtype_name):
        return False
    if q.requires_grad or not _fp8_shapes_ok(q):
        return False
    rocm = q.device.rocm_version
    return not (
        q.device.vendor == "amd" and dtype_name == "float8_e4m3fn" and rocm is not None and rocm < OCP_FP8_MIN_ROCM
    )


def wants_fp8_fnuz(q: KernelQuery) -> bool:
    return _fp8(q, "float8_e4m3fnuz")


def wants_fp8_ocp(q: KernelQuery) -> bool:
    return _fp8(q, "float8_e4m3fn")


def wants_bf16(q: KernelQuery) -> bool:
    return q.arch.is_native("bf16") and q.arch.family not in BF16_TROUBLED_FAMILIES


def wants_fp16(q: KernelQuery) -> bool:
    return _gpu(q) and q.arch.is_native("fp16") and q.arch.family in FP16_FAMILIES | BF16_TROUBLED_FAMILIES


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
    description="bf16 where the hardware has it natively (Ampere+, CDNA, RDNA4, AVX512-BF16/AMX CPUs)",
)
FP16 = Kernel(
    "matmul",
    "fp16",
    "fp16",
    wants_fp16,
    _cast_matmul("float16"),
    priority=20,
    description="fp16 on Volta/Turing tensor cores, and on RDNA3/RDNA3.5 instead of their troubled bf16",
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
