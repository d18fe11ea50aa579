"""AMD gfx target -> architecture family, per-precision hardware support and torch fp8 dtype flavour.

Sources: product names from LLVM AMDGPUUsage (llvm.org/docs/AMDGPUUsage.html); matrix dtypes from ROCm's
precision-support page (rocm.docs.amd.com/en/latest/reference/precision-support.html), rocprofiler-compute
performance-model.rst and MLIR AMDGPU WMMAInTypes; fp8 variants from PyTorch ScaledBlas.cpp
`_scaled_mm_is_fnuz()` and the hipBLASLt docs; the notes from the ROCm issues each one names.
Choices where the sources leave room (documented, and the tests pin them):
  - fp64 is "native" on every target (vector FP64 units; slow on RDNA), as for NVIDIA consumer parts.
  - bf16 on RDNA1/RDNA2 is "emulated": no bf16 hardware, although ROCm torch.cuda.is_bf16_supported() says True.
  - int8 on RDNA1/RDNA2 is "emulated": no int8 matrix unit; generic BLAS kernels (dot instructions at best).
  - tf32 is native only on gfx942. gfx950 is "emulated": rocprofiler marks xf32 absent on CDNA4 while torch's
    is_tf32_supported() still says True for "gfx95" (whether it is emulated there is unverified).
  - fp8 uses the FNUZ dtypes on gfx942 only; gfx950 and gfx1200/gfx1201 use the OCP dtypes.
"""

from __future__ import annotations

import re

from gpudash.knowledge.levels import EMULATED, NATIVE, ArchInfo, support, unknown_arch

SOURCE = "LLVM AMDGPUUsage; ROCm precision-support docs; PyTorch ScaledBlas.cpp"

_CDNA1 = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_CDNA2 = dict(_CDNA1)
_CDNA3 = dict(_CDNA2, tf32=NATIVE, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)
_CDNA4 = dict(_CDNA2, tf32=EMULATED, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE, fp4=NATIVE)
_RDNA12 = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=EMULATED)
_RDNA3 = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_RDNA4 = dict(_RDNA3, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)

_FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz")
_OCP = ("float8_e4m3fn", "float8_e5m2")
_NO_FP8 = (None, None)

_BF16_EMU = "bf16 emulated (no bf16 hardware), although torch.cuda.is_bf16_supported() says True on ROCm"
_RDNA_FP64 = "fp64 at a small fraction of the fp32 rate"
_NO_WHEEL = "not in official PyTorch ROCm wheels; HSA_OVERRIDE_GFX_VERSION spoofing can give wrong results"
_RDNA3_BF16 = "rocBLAS bf16 GEMM reported wrong on gfx1100 (pytorch#189394); see checks"
_RDNA35 = (
    "ROCm bf16 partial; see checks",
    "fp32 matmul can be far slower than fp16 here (ROCm issues #4499, #5807)",
    "hipBLASLt support on gfx115x is recent (ROCm >= 7.0); see checks",
)

# gfx target -> (family, support row, (fp8 e4m3 dtype, fp8 e5m2 dtype), notes)
_TABLE: dict[str, tuple[str, dict[str, str], tuple[str | None, str | None], tuple[str, ...]]] = {
    "gfx908": ("CDNA1", _CDNA1, _NO_FP8, ("bf16 matrix at half the fp16 rate (MI100)",)),
    "gfx90a": ("CDNA2", _CDNA2, _NO_FP8, ("MI250/MI250X: each GCD is its own torch device",)),
    "gfx942": ("CDNA3", _CDNA3, _FNUZ, ("fp8 uses the FNUZ dtypes (float8_e4m3fnuz, max 240), not float8_e4m3fn",)),
    "gfx950": (
        "CDNA4",
        _CDNA4,
        _OCP,
        (
            "tf32: torch says supported, but CDNA4 has no xf32 matrix unit (emulated, unverified)",
            "fp8 uses the OCP dtypes; needs ROCm >= 6.5 for _scaled_mm",
        ),
    ),
}
for _gfx in ("gfx1010", "gfx1011", "gfx1012"):
    _TABLE[_gfx] = ("RDNA1", _RDNA12, _NO_FP8, (_BF16_EMU, _RDNA_FP64, _NO_WHEEL))
for _gfx in ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"):
    _TABLE[_gfx] = ("RDNA2", _RDNA12, _NO_FP8, (_BF16_EMU, _RDNA_FP64))
for _gfx in ("gfx1100", "gfx1101", "gfx1102", "gfx1103"):
    _TABLE[_gfx] = (
        "RDNA3",
        _RDNA3,
        _NO_FP8,
        (_RDNA3_BF16, "hipBLASLt not preferred by default on gfx110x", _RDNA_FP64),
    )
for _gfx in ("gfx1150", "gfx1151", "gfx1152"):
    _TABLE[_gfx] = ("RDNA3.5", _RDNA3, _NO_FP8, _RDNA35 + (_RDNA_FP64,))
for _gfx in ("gfx1200", "gfx1201"):
    _TABLE[_gfx] = (
        "RDNA4",
        _RDNA4,
        _OCP,
        (
            "fp8 uses the OCP dtypes; _scaled_mm needs ROCm >= 6.5",
            "hipBLASLt fp32 matmul silently wrong reported on gfx1201 (rocm-libraries#5706); see checks",
            _RDNA_FP64,
        ),
    )
del _gfx

_GFX_RE = re.compile(r"gfx[0-9a-f]+", re.IGNORECASE)


def parse_gfx(gfx_target: object) -> str | None:
    """'gfx942:sramecc+:xnack-' or 'amdgcn-amd-amdhsa--gfx942' -> 'gfx942'; anything else -> None."""
    if not isinstance(gfx_target, str):
        return None
    m = _GFX_RE.search(gfx_target.split(":")[0]) or _GFX_RE.search(gfx_target)
    return m.group(0).lower() if m else None


def amd_arch(gfx_target: str | None) -> ArchInfo:
    """gfx target -> family and native precisions. Unknown input -> family 'unknown'. Never raises."""
    try:
        gfx = parse_gfx(gfx_target)
        if gfx is None or gfx not in _TABLE:
            return unknown_arch(SOURCE, f"gfx target {gfx_target!r} is not in the table")
        family, levels, (e4m3, e5m2), notes = _TABLE[gfx]
        return ArchInfo(
            family=family,
            precisions=support(**levels),
            fp8_dtype=e4m3,
            fp8_e5m2_dtype=e5m2,
            notes=tuple(notes),
            source=SOURCE,
        )
    except Exception as exc:
        return unknown_arch(SOURCE, f"gfx target lookup failed: {exc}")
