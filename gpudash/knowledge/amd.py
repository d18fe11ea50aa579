"""AMD gfx target -> architecture family, per-precision hardware support, products and torch fp8 dtype flavour.

Every target of LLVM's AMDGPU processor table from GFX8 to GFX12 is here. Sources (public):
  - targets, products, xnack/sramecc features: LLVM AMDGPUUsage "Processors" table, _LLVM_TARGETS;
  - instructions per target (16-bit VALU, packed math, dot products, MFMA/WMMA, fp8, xf32): the ISA feature sets
    of LLVM's AMDGPU.td, _LLVM_ISA;
  - family names and products per target: ROCm "AMD GPU specifications" (gpu-arch-specs), _ROCM_SPECS;
  - matrix-core data types on CDNA: ROCm "Data types and precision support", _ROCM_PRECISION;
  - WMMA data types on RDNA3 (fp16, bf16, iu8): GPUOpen "WMMA on RDNA 3", _WMMA_RDNA3;
  - fp8 flavour: PyTorch's `_scaled_mm_is_fnuz()` / scaled_mm_arch_allowed (FNUZ on gfx942, OCP elsewhere), _TORCH_FP8.
Levels (see levels.py): int8 "native" means int8 matrix units (MFMA/WMMA). Targets with only the 4-way int8 dot
instruction (v_dot4_i32_i8: gfx906, gfx1011/1012, gfx103x) are "emulated" with a note saying so, as dp4a-only
NVIDIA parts are; targets without it are "emulated" with a note saying that instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudash.knowledge.levels import EMULATED, NATIVE, ArchInfo, support, unknown_arch


def _levels(base: dict[str, str] | None = None, **levels: str) -> dict[str, str]:
    """A support row: the named precisions' levels (every other precision is absent, see levels.support)."""
    return {**(base or {}), **levels}


_LLVM_TARGETS = "https://llvm.org/docs/AMDGPUUsage.html#processors"
_LLVM_ISA = "https://github.com/llvm/llvm-project/blob/main/llvm/lib/Target/AMDGPU/AMDGPU.td"
_ROCM_SPECS = "https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html"
_ROCM_PRECISION = "https://rocm.docs.amd.com/en/latest/reference/precision-support.html"
_WMMA_RDNA3 = "https://gpuopen.com/learn/wmma_on_rdna3/"
_TORCH_FP8 = "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cuda/ScaledBlas.cpp"
_TORCH_WHEELS = "https://github.com/pytorch/pytorch/blob/main/.ci/docker/manywheel/build.sh"
SOURCE = f"{_LLVM_TARGETS}; {_LLVM_ISA}; {_ROCM_SPECS}"

# Support rows. Every precision not named is absent.
_GFX8 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=EMULATED)
_GCN5 = _levels(_GFX8)  # adds packed fp16 (VOP3P): same levels, faster fp16 (see notes)
_CDNA1 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_CDNA2 = _levels(_CDNA1)
_CDNA3 = _levels(_CDNA2, tf32=NATIVE, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)
_CDNA4 = _levels(_CDNA2, tf32=EMULATED, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE, fp4=NATIVE)
_RDNA12 = _levels(_GFX8)
_RDNA3 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_RDNA4 = _levels(_RDNA3, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)
_GFX125 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=EMULATED)

_FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz")
_OCP = ("float8_e4m3fn", "float8_e5m2")
_NO_FP8 = (None, None)

# Notes: each says only what is true of every product of the target it is attached to.
_FP16_GFX8 = "fp16 runs at the fp32 rate: 16-bit VALU instructions, no packed math before GFX9 (LLVM AMDGPU.td)"
_FP16_PACKED = "fp16 packed math (v_pk_fma_f16): twice the fp32 rate on the vector units, no matrix units"
_NO_INT8 = "int8: no dot-product or matrix instructions on this target; int8 GEMMs run on the 32-bit ALUs"
_DOT4 = "int8: v_dot4_i32_i8 dot instructions (4x the fp32 rate), no int8 matrix units (LLVM AMDGPU.td Dot1Insts)"
_BF16_EMU = (
    "bf16 emulated: no bf16 arithmetic or matrix instructions on this target, although "
    "torch.cuda.is_bf16_supported() says True on every ROCm device"
)
_NO_WHEEL = (
    f"not a target of the official PyTorch ROCm wheels ({_TORCH_WHEELS}); "
    "HSA_OVERRIDE_GFX_VERSION spoofing can give wrong results"
)
# Targets the official PyTorch ROCm wheels are built for (PyTorch 2.10/2.11 manywheel build.sh).
WHEEL_TARGETS = frozenset(
    ("gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102")
    + ("gfx1150", "gfx1151", "gfx1200", "gfx1201")
)
_RDNA_FP64 = "fp64 at a small fraction of the fp32 rate (consumer RDNA)"
_WMMA = f"WMMA matrix instructions for fp16, bf16 and int8 (iu8) ({_WMMA_RDNA3}); no fp8 or tf32 matrix type"

# RDNA3 / RDNA3.5 bf16: the hardware has it (WMMA bf16, v_dot2_f32_bf16); the library-level reports below make a
# spec-only answer cautious. A live probe that verifies bf16 correct and faster overrides this caution.
_BF16_RDNA3_CAUTION = (
    "bf16 is native (WMMA) but the software stack has reported bf16 faults on gfx1100: rocBLAS bf16 GEMM numeric "
    "drift, fixed by hipBLASLt, the default from ROCm 7.13 (https://github.com/pytorch/pytorch/pull/189394); "
    "AOTriton marks gfx1100 experimental after Triton accuracy problems (https://github.com/ROCm/TheRock/issues/1315); "
    "verify bf16 with the probe before trusting it"
)
_BF16_RDNA35_CAUTION = (
    "bf16 is native (WMMA) but bf16 training faults are reported on gfx1151 with ROCm nightlies "
    "(https://github.com/ROCm/legacy-rocm-build/issues/6034); verify bf16 with the probe before trusting it"
)
_RDNA35_FP32 = (
    "fp32 matmul can be far slower than fp16 on gfx115x (https://github.com/ROCm/legacy-rocm-build/issues/4499, "
    "https://github.com/ROCm/legacy-rocm-build/issues/5807)"
)
_RDNA35_LT = "hipBLASLt on gfx115x needs ROCm >= 7.0 in PyTorch's supported list; see checks"
_RDNA4_FP32 = (
    "fp32 GEMMs reported silently wrong at large M on gfx1201 (https://github.com/ROCm/rocm-libraries/issues/5706, "
    "https://github.com/ROCm/legacy-rocm-build/issues/6595); see checks"
)


@dataclass(frozen=True)
class Target:
    family: str
    products: tuple[str, ...]
    levels: dict[str, str]
    matrix_unit: str | None = None
    fp8: tuple[str | None, str | None] = _NO_FP8
    notes: tuple[str, ...] = ()
    cautions: dict[str, str] = field(default_factory=dict)
    source: str = SOURCE


def _gfx8(family: str, products: tuple[str, ...], *extra: str) -> Target:
    return Target(family, products, _GFX8, None, _NO_FP8, (_FP16_GFX8, _BF16_EMU, _NO_INT8, *extra))


def _gcn5(products: tuple[str, ...], *extra: str) -> Target:
    return Target("GCN5", products, _GCN5, None, _NO_FP8, (_FP16_PACKED, _BF16_EMU, _NO_INT8, *extra))


def _rdna12(family: str, products: tuple[str, ...], dot4: bool, *extra: str) -> Target:
    int8 = _DOT4 if dot4 else _NO_INT8
    return Target(family, products, _RDNA12, None, _NO_FP8, (_FP16_PACKED, _BF16_EMU, int8, _RDNA_FP64, *extra))


def _rdna3(products: tuple[str, ...], *extra: str) -> Target:
    return Target(
        "RDNA3",
        products,
        _RDNA3,
        "WMMA",
        _NO_FP8,
        (_WMMA, _BF16_RDNA3_CAUTION, "hipBLASLt not preferred by default on gfx110x before ROCm 7.13", _RDNA_FP64)
        + extra,
        {"bf16": _BF16_RDNA3_CAUTION},
        f"{SOURCE}; {_WMMA_RDNA3}",
    )


def _rdna35(products: tuple[str, ...]) -> Target:
    return Target(
        "RDNA3.5",
        products,
        _RDNA3,
        "WMMA",
        _NO_FP8,
        (_WMMA, _BF16_RDNA35_CAUTION, _RDNA35_FP32, _RDNA35_LT, _RDNA_FP64),
        {"bf16": _BF16_RDNA35_CAUTION},
        f"{SOURCE}; {_WMMA_RDNA3}",
    )


def _rdna4(products: tuple[str, ...]) -> Target:
    return Target(
        "RDNA4",
        products,
        _RDNA4,
        "WMMA",
        _OCP,
        (
            "WMMA adds fp8/bf8 (OCP) to fp16, bf16 and int8 (LLVM AMDGPU.td Dot11Insts, GFX12 WMMA)",
            f"fp8 uses the OCP dtypes; torch _scaled_mm needs ROCm >= 6.5 ({_TORCH_FP8})",
            _RDNA4_FP32,
            _RDNA_FP64,
        ),
        {},
        f"{SOURCE}; {_TORCH_FP8}",
    )


_GCN3_FIJI = ("Radeon R9 Nano", "Radeon R9 Fury", "Radeon R9 Fury X", "Radeon Pro Duo", "Radeon Instinct MI8")
_GCN4_POLARIS = ("Radeon RX 460", "Radeon RX 470", "Radeon RX 480", "Radeon Instinct MI6")

_products: tuple[str, ...]
TARGETS: dict[str, Target] = {
    # GFX8 (GCN3 "Volcanic Islands"; gfx803 is also Polaris, GCN4: same ISA, see _gfx803_family)
    "gfx801": _gfx8("GCN3", ("Carrizo APUs (A6-8500P, A8-8600P, A10-8700P, FX-8800P)",)),
    "gfx802": _gfx8("GCN3", ("Radeon R9 285", "Radeon R9 380", "Radeon R9 385")),
    "gfx803": _gfx8("GCN3/GCN4", _GCN3_FIJI + _GCN4_POLARIS, "gfx803 covers Fiji (GCN3) and Polaris (GCN4)"),
    "gfx805": _gfx8("GCN3", ("FirePro S7150", "FirePro S7100", "FirePro W7100")),
    "gfx810": _gfx8("GCN3", ()),
    # GFX9 (Vega, GCN5; gfx906 is Vega 20, GCN5.1; gfx908+ are CDNA)
    "gfx900": _gcn5(("Radeon Vega Frontier Edition", "Radeon RX Vega 56", "Radeon RX Vega 64", "Radeon Instinct MI25")),
    "gfx902": _gcn5(("Ryzen 3 2200G", "Ryzen 5 2400G")),
    "gfx904": _gcn5(()),
    "gfx906": Target(
        "GCN5.1",
        ("Radeon Instinct MI50", "Radeon Instinct MI60", "Radeon VII", "Radeon Pro VII"),
        _GCN5,
        None,
        _NO_FP8,
        (
            _FP16_PACKED,
            _BF16_EMU,
            _DOT4,
            "fp64 at half the fp32 rate on MI50/MI60/Radeon Pro VII (LLVM HalfRate64Ops); Radeon VII is fused lower",
        ),
    ),
    "gfx909": _gcn5(()),
    "gfx90c": _gcn5(("Ryzen 4000G APUs (Ryzen 7 4700G, Ryzen 5 4600G, Ryzen 3 4300G)",)),
    "gfx908": Target(
        "CDNA1",
        ("AMD Instinct MI100",),
        _CDNA1,
        "MFMA",
        _NO_FP8,
        (
            f"MFMA matrix cores for fp32, fp16, bf16 and int8; no fp64 matrix ({_ROCM_PRECISION})",
            "bf16 matrix at half the fp16 rate (MI100: 92.3 vs 184.6 TFLOPS)",
        ),
        {},
        f"{SOURCE}; {_ROCM_PRECISION}",
    ),
    "gfx90a": Target(
        "CDNA2",
        ("AMD Instinct MI210", "AMD Instinct MI250", "AMD Instinct MI250X"),
        _CDNA2,
        "MFMA",
        _NO_FP8,
        (
            f"MFMA matrix cores add fp64 ({_ROCM_PRECISION})",
            "MI250/MI250X: each GCD is its own torch device",
        ),
        {},
        f"{SOURCE}; {_ROCM_PRECISION}",
    ),
}
for _gfx, _products in (
    ("gfx940", ("AMD Instinct MI300A (early)",)),
    ("gfx941", ("AMD Instinct MI300X (early)",)),
    ("gfx942", ("AMD Instinct MI300A", "AMD Instinct MI300X", "AMD Instinct MI325X")),
):
    TARGETS[_gfx] = Target(
        "CDNA3",
        _products,
        _CDNA3,
        "MFMA",
        _FNUZ,
        (
            f"MFMA matrix cores add xf32 (tf32) and fp8 ({_ROCM_PRECISION})",
            f"fp8 uses the FNUZ dtypes (float8_e4m3fnuz, max 240), not float8_e4m3fn ({_TORCH_FP8})",
        )
        + (
            ("gfx940/gfx941 were pre-production MI300 steppings; PyTorch's fp8 paths accept gfx942 only",)
            if _gfx != "gfx942"
            else ()
        ),
        {},
        f"{SOURCE}; {_ROCM_PRECISION}; {_TORCH_FP8}",
    )
TARGETS["gfx950"] = Target(
    "CDNA4",
    ("AMD Instinct MI350X", "AMD Instinct MI355X"),
    _CDNA4,
    "MFMA",
    _OCP,
    (
        "tf32: no xf32 matrix instructions on gfx950 (LLVM AMDGPU.td lists XF32Insts for gfx942 only); "
        "torch.backends.cuda.matmul.allow_tf32 still says supported",
        "MFMA adds scaled fp8/fp6/fp4 (MX) formats",
        f"fp8 uses the OCP dtypes; torch _scaled_mm needs ROCm >= 6.5 ({_TORCH_FP8})",
    ),
    {},
    f"{SOURCE}; {_TORCH_FP8}",
)
# GFX10.1 (RDNA1): gfx1011/gfx1012 have the int8 dot instructions, gfx1010/gfx1013 do not (AMDGPU.td).
TARGETS["gfx1010"] = _rdna12(
    "RDNA1", ("Radeon RX 5700", "Radeon RX 5700 XT", "Radeon RX 5600 XT", "Radeon Pro 5600M"), False
)
TARGETS["gfx1011"] = _rdna12("RDNA1", ("Radeon Pro V520",), True)
TARGETS["gfx1012"] = _rdna12("RDNA1", ("Radeon RX 5500", "Radeon RX 5500 XT", "Radeon Pro W5500"), True)
TARGETS["gfx1013"] = _rdna12("RDNA1", (), False)
# GFX10.3 (RDNA2)
for _gfx, _products in (
    ("gfx1030", ("Radeon RX 6800", "Radeon RX 6800 XT", "Radeon RX 6900 XT", "Radeon RX 6950 XT", "Radeon PRO W6800")),
    ("gfx1031", ("Radeon RX 6700", "Radeon RX 6700 XT", "Radeon RX 6750 XT")),
    ("gfx1032", ("Radeon RX 6600", "Radeon RX 6600 XT", "Radeon RX 6650 XT", "Radeon PRO W6600")),
    ("gfx1033", ()),
    ("gfx1034", ()),
    ("gfx1035", ()),
    ("gfx1036", ()),
):
    TARGETS[_gfx] = _rdna12("RDNA2", _products, True)
# GFX11 (RDNA3, RDNA3.5)
TARGETS["gfx1100"] = _rdna3(
    ("Radeon RX 7900 XTX", "Radeon RX 7900 XT", "Radeon RX 7900 GRE", "Radeon PRO W7900", "Radeon PRO W7800")
)
TARGETS["gfx1101"] = _rdna3(("Radeon RX 7800 XT", "Radeon RX 7700 XT", "Radeon RX 7700", "Radeon PRO W7700"))
TARGETS["gfx1102"] = _rdna3(("Radeon RX 7600",))
TARGETS["gfx1103"] = _rdna3(("Radeon 780M",))
TARGETS["gfx1150"] = _rdna35(("Radeon 890M",))
TARGETS["gfx1151"] = _rdna35(("Radeon 8060S",))
TARGETS["gfx1152"] = _rdna35(("Radeon 860M",))
TARGETS["gfx1153"] = _rdna35(())
# GFX12 (RDNA4)
TARGETS["gfx1200"] = _rdna4(("Radeon RX 9060 XT", "Radeon RX 9060", "Radeon RX 9050"))
TARGETS["gfx1201"] = _rdna4(("Radeon RX 9070 XT", "Radeon RX 9070", "Radeon RX 9070 GRE", "Radeon AI PRO R9700"))
# GFX12.5: in LLVM without public products; levels from the ISA feature list only (packed bf16, int8 dot only).
for _gfx in ("gfx1250", "gfx1251"):
    TARGETS[_gfx] = Target(
        "GFX12.5",
        (),
        _GFX125,
        None,
        _NO_FP8,
        (
            "no public products; levels from LLVM's ISA feature list only (packed bf16 arithmetic, "
            "v_dot4_i32_iu8); matrix-unit data types not established from public sources",
        ),
        {},
        f"{_LLVM_ISA}",
    )
del _gfx, _products

# --- spellings -----------------------------------------------------------------------------------------------

_GFX_RE = re.compile(r"gfx([0-9a-f]{3,5})(?![0-9a-z])", re.IGNORECASE)
_TRIPLE_RE = re.compile(r"^\s*(\d{1,2})\.(\d{1,2})\.(\d{1,2})\s*$")  # HSA_OVERRIDE_GFX_VERSION: "10.3.0", "9.0.10"
_KFD_RE = re.compile(r"^\s*(\d{5,6})\s*$")  # KFD gfx_target_version: 90010, 110501


def _from_parts(major: int, minor: int, step: int) -> str | None:
    if not (6 <= major <= 12 and minor < 16 and step < 16):
        return None
    return f"gfx{major}{minor:x}{step:x}"


def _legacy_smi(digits: str) -> str | None:
    """rocm-smi/amdsmi before 2025 printed KFD's version with the minor-0 case in decimal: gfx90a as "gfx9010",
    gfx906 as "gfx9006", gfx1100 as "gfx11000", gfx1201 as "gfx12001" (rocm_smi_lib rsmi_get_gfx_target_version).
    No real target has 4 digits starting with 6-9 or 5 digits, so these spellings are unambiguous."""
    if len(digits) == 4 and digits[0] in "6789" and digits[1] == "0":
        return _from_parts(int(digits[0]), 0, int(digits[2:]))
    if len(digits) == 5 and digits[:2] in ("10", "11", "12") and digits[2] == "0":
        return _from_parts(int(digits[:2]), 0, int(digits[3:]))
    return None


def parse_gfx(gfx_target: object) -> str | None:
    """The canonical gfx name from any spelling the tools print, else None.

    'gfx90a:sramecc+:xnack-' (torch gcnArchName), 'amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-' (rocminfo ISA),
    'GFX Version: gfx1030' / 'gfx9010' / 'gfx11000' (rocm-smi), 'gfx950' (amd-smi TARGET_GRAPHICS_VERSION),
    '10.3.0' / '9.0.10' (HSA_OVERRIDE_GFX_VERSION), 90010 / '110501' (KFD gfx_target_version).
    """
    if isinstance(gfx_target, bool):
        return None
    if isinstance(gfx_target, int):
        gfx_target = str(gfx_target)
    if not isinstance(gfx_target, str):
        return None
    m = _TRIPLE_RE.match(gfx_target)
    if m:
        return _from_parts(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    m = _KFD_RE.match(gfx_target)
    if m:
        n = int(m.group(1))
        return _from_parts(n // 10000, (n // 100) % 100, n % 100)
    m = _GFX_RE.search(gfx_target.split(":")[0]) or _GFX_RE.search(gfx_target)
    if not m:
        return None
    digits = m.group(1).lower()
    legacy = _legacy_smi(digits)
    if legacy is not None:
        return legacy
    return f"gfx{digits}" if len(digits) <= 4 else None


def target_features(gfx_target: object) -> dict[str, bool]:
    """The target-ID feature suffixes: 'gfx90a:sramecc+:xnack-' -> {'sramecc': True, 'xnack': False}."""
    if not isinstance(gfx_target, str) or ":" not in gfx_target:
        return {}
    out = {}
    for part in gfx_target.split(":")[1:]:
        part = part.strip()
        if len(part) > 1 and part[-1] in "+-":
            out[part[:-1].lower()] = part[-1] == "+"
    return out


# Fiji (GCN3) vs Polaris (GCN4) share gfx803; the product name tells them apart.
_POLARIS_RE = re.compile(r"polaris|ellesmere|baffin|lexa|\brx\s*(4[6-8]0|5[4-9]0)\b|\bmi6\b|\bwx\s*[2-7]100\b", re.I)
_FIJI_RE = re.compile(r"fiji|fury|\bnano\b|\bmi8\b|pro duo|s9300", re.I)


def _gfx803_family(name: str | None) -> str | None:
    if not name:
        return None
    if _POLARIS_RE.search(name):
        return "GCN4"
    if _FIJI_RE.search(name):
        return "GCN3"
    return None


def amd_arch(gfx_target: str | None, name: str | None = None) -> ArchInfo:
    """gfx target (any spelling parse_gfx accepts) -> family and native precisions. `name`, when given, settles
    what the target alone cannot (gfx803: Fiji is GCN3, Polaris GCN4). Unknown input -> 'unknown'. Never raises."""
    try:
        gfx = parse_gfx(gfx_target)
        if gfx is None or gfx not in TARGETS:
            return unknown_arch(SOURCE, f"gfx target {gfx_target!r} is not in the table")
        t = TARGETS[gfx]
        family = (gfx == "gfx803" and _gfx803_family(name)) or t.family
        e4m3, e5m2 = t.fp8
        notes = t.notes if gfx in WHEEL_TARGETS else (*t.notes, _NO_WHEEL)
        return ArchInfo(
            family=family,
            precisions=support(**t.levels),
            fp8_dtype=e4m3,
            fp8_e5m2_dtype=e5m2,
            notes=tuple(notes),
            source=t.source,
            matrix_unit=t.matrix_unit,
            cautions=dict(t.cautions),
        )
    except Exception as exc:
        return unknown_arch(SOURCE, f"gfx target lookup failed: {exc}")
