"""What PyTorch itself says about each precision on a device, with the call it came from.

These are torch's claims, not facts: ROCm builds say bf16 on every AMD part, and on CUDA
is_bf16_supported() without including_emulation=False says yes to any GPU that can hold a bf16 tensor.
For fp8 torch has no query, so its own _scaled_mm device gate is restated (ScaledBlas.cpp).
"""

from __future__ import annotations

import torch

# ROCm targets torch._scaled_mm accepts (ScaledBlasDeviceUtils.cpp); gfx950/gfx120x need ROCm >= 6.5.
_ROCM_FP8 = ("gfx942", "gfx950", "gfx1200", "gfx1201")


def _cuda_props(device: str):
    return torch.cuda.get_device_properties(torch.device(device))


def _gfx(props) -> str:
    return (getattr(props, "gcnArchName", "") or "").split(":")[0]


def _has_dtype(name: str) -> bool:
    return isinstance(getattr(torch, name, None), torch.dtype)


def cpu_claim(precision: str) -> tuple[bool | None, str]:
    mkldnn = torch.ops.mkldnn
    if precision in ("fp64", "fp32"):
        return True, "torch runs this dtype on every CPU"
    if precision == "tf32":
        return False, "torch has no TF32 for CPU matmuls (oneDNN offers a bf16 fp32-precision mode instead)"
    if precision == "bf16":
        return bool(mkldnn._is_mkldnn_bf16_supported()), "torch.ops.mkldnn._is_mkldnn_bf16_supported()"
    if precision == "fp16":
        return bool(mkldnn._is_mkldnn_fp16_supported()), "torch.ops.mkldnn._is_mkldnn_fp16_supported()"
    if precision in ("fp8_e4m3", "fp8_e5m2"):
        return (
            _has_dtype("float8_e4m3fn") and hasattr(torch, "_scaled_mm"),
            "torch._scaled_mm has a CPU kernel for float8_e4m3fn / float8_e5m2",
        )
    if precision == "int8":
        return hasattr(torch, "_int_mm"), "torch._int_mm exists (CPU kernel)"
    if precision == "fp4":
        return None, "torch has no fp4 query for the CPU"
    return None, "no torch query"


def cuda_claim(precision: str, device: str) -> tuple[bool | None, str]:
    props = _cuda_props(device)
    hip = bool(getattr(torch.version, "hip", None))
    cc = (props.major, props.minor)
    if precision in ("fp64", "fp32", "fp16"):
        return True, "torch runs this dtype on every CUDA/ROCm device"
    if precision == "bf16":
        with torch.cuda.device(torch.device(device)):
            value = torch.cuda.is_bf16_supported(including_emulation=False)
        basis = "torch.cuda.is_bf16_supported(including_emulation=False)"
        return bool(value), basis + (" (True on every ROCm device)" if hip else "")
    if precision == "tf32":
        query = getattr(torch.cuda, "is_tf32_supported", None)
        if query is not None:
            with torch.cuda.device(torch.device(device)):
                return bool(query()), "torch.cuda.is_tf32_supported()"
        return (not hip and cc >= (8, 0)), "compute capability >= 8.0 (this torch has no is_tf32_supported)"
    if precision in ("fp8_e4m3", "fp8_e5m2"):
        if hip:
            return _gfx(props) in _ROCM_FP8, f"torch._scaled_mm ROCm gate {_ROCM_FP8}"
        return cc >= (9, 0) or cc == (8, 9), "torch._scaled_mm CUDA gate (compute capability >= 8.9)"
    if precision == "int8":
        return hasattr(torch, "_int_mm"), "torch._int_mm exists (cuBLASLt / hipBLASLt int8 GEMM)"
    if precision == "fp4":
        if not _has_dtype("float4_e2m1fn_x2"):
            return False, "this torch has no float4_e2m1fn_x2 dtype"
        return (not hip and cc >= (10, 0)), "float4_e2m1fn_x2 exists; NVFP4 _scaled_mm needs compute capability >= 10.0"
    return None, "no torch query"


def claim(precision: str, device: str) -> tuple[bool | None, str]:
    if device.startswith("cuda"):
        return cuda_claim(precision, device)
    return cpu_claim(precision)
