"""NVIDIA compute capability (+ device name where one cc covers different chips) -> family and precision support.

Every compute capability from 3.0 to 12.1. Sources (public):
  - cc per product and family: NVIDIA "CUDA GPUs" (_CUDA_GPUS) and the CUDA C++ Programming Guide's compute
    capability tables (_CUDA_GUIDE), including its per-SM arithmetic throughput table (fp16 rates per cc);
  - Thor is cc 10.1 up to CUDA 12.9 and 11.0 from CUDA 13.0 (_THOR);
  - tensor-core data types per generation: NVIDIA architecture whitepapers (Volta, Turing, Ampere, Hopper, Ada,
    Blackwell) and the PyTorch / TransformerEngine gates (bf16 native from 8.0, fp8 from 8.9, fp4 from 10.0);
  - TU116/TU117 (GTX 16xx, Quadro T400-T2000, MX450/MX550) have no tensor cores but dedicated FP16 units at twice
    the fp32 rate: NVIDIA Turing whitepaper / GTX 1660 Ti launch material (_TURING).
Levels (see levels.py): int8 "native" means int8 tensor cores; fp64 is native on every GPU (slow rates in notes).
A note is attached only where it holds for every chip the lookup could be; the device name narrows that.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from gpudash.knowledge.levels import EMULATED, NATIVE, ArchInfo, support, unknown_arch


def _levels(base: dict[str, str] | None = None, **levels: str) -> dict[str, str]:
    """A support row: the named precisions' levels (every other precision is absent, see levels.support)."""
    return {**(base or {}), **levels}


_CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus"
_CUDA_GUIDE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities"
_THROUGHPUT = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"
_THOR = "https://docs.nvidia.com/cuda/curanddx/release_notes.html"
_TURING = "https://images.nvidia.com/aem-dam/en-zz/Solutions/design-visualization/technologies/turing-architecture/NVIDIA-Turing-Architecture-Whitepaper.pdf"
_GA102_WP = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
_TORCH_GATES = "https://github.com/pytorch/pytorch/blob/main/torch/cuda/__init__.py"
_TE_GATES = "https://github.com/NVIDIA/TransformerEngine/blob/main/transformer_engine/pytorch/quantization.py"
SOURCE = f"{_CUDA_GPUS}; {_CUDA_GUIDE}; {_TORCH_GATES}"

_PRE_PASCAL = _levels(fp64=NATIVE, fp32=NATIVE, fp16=EMULATED, bf16=EMULATED)
_FAST_FP16 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED)  # 5.3, 6.0, 6.2: fp16 at 2x fp32
_PASCAL_P100 = _levels(_FAST_FP16)
_PASCAL_DP4A = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=EMULATED)
_VOLTA = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED)
_TC_INT8 = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=NATIVE)  # Xavier, TU10x
_TURING_NO_TC = _levels(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=EMULATED)  # TU116/117, or unknown
_AMPERE = _levels(fp64=NATIVE, fp32=NATIVE, tf32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_ADA_HOPPER = _levels(_AMPERE, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)
_BLACKWELL = _levels(_ADA_HOPPER, fp4=NATIVE)

_FP64_1_32 = "fp64 at 1/32 of the fp32 rate"
_FP64_1_64 = "fp64 at 1/64 of the fp32 rate"
_GEFORCE_HALF = "GeForce: tensor math with fp32 accumulate runs at half rate (the fp16-accumulate rate is full)"
_PRO_FULL = "workstation/datacenter part: tensor math with fp32 accumulate runs at the full rate"
_HALF_RATE_UNKNOWN = (
    "GeForce parts run tensor math with fp32 accumulate at half rate, workstation/datacenter parts at full rate "
    "(the device name decides)"
)
_DP4A = "int8 via dp4a only (4-way dot instruction, 4x the fp32 rate), no int8 tensor cores"
_OLD_WHEELS = "not a target of current PyTorch CUDA wheels"


class CC(NamedTuple):
    family: str
    chips: str
    levels: dict[str, str]
    matrix_unit: str | None
    notes: tuple[str, ...] = ()
    source: str = SOURCE


_TABLE: dict[tuple[int, int], CC] = {
    (3, 0): CC(
        "Kepler",
        "GK104/GK106/GK107 (GeForce 600/700, Tesla K10)",
        _PRE_PASCAL,
        None,
        ("fp64 at 1/24 of fp32", _OLD_WHEELS),
    ),
    (3, 2): CC("Kepler", "Tegra K1", _PRE_PASCAL, None, (_OLD_WHEELS,)),
    (3, 5): CC(
        "Kepler",
        "GK110 (Tesla K20/K40, GTX TITAN/780)",
        _PRE_PASCAL,
        None,
        ("fp64 at 1/3 of fp32 on Tesla", _OLD_WHEELS),
    ),
    (3, 7): CC("Kepler", "GK210 (Tesla K80)", _PRE_PASCAL, None, ("fp64 at 1/3 of fp32", _OLD_WHEELS)),
    (5, 0): CC("Maxwell", "GM107/GM108 (GTX 750, Quadro K620)", _PRE_PASCAL, None, (_FP64_1_32, _OLD_WHEELS)),
    (5, 2): CC("Maxwell", "GM200/GM204/GM206 (GTX 900, Tesla M40/M60)", _PRE_PASCAL, None, (_FP64_1_32, _OLD_WHEELS)),
    (5, 3): CC(
        "Maxwell",
        "Tegra X1 (Jetson TX1/Nano)",
        _FAST_FP16,
        None,
        (f"fp16 at twice the fp32 rate ({_THROUGHPUT})", _OLD_WHEELS),
    ),
    (6, 0): CC("Pascal", "GP100 (Tesla P100)", _PASCAL_P100, None, ("fp16 at 2x the fp32 rate, no tensor cores",)),
    (6, 1): CC(
        "Pascal",
        "GP102/GP104/GP106/GP107/GP108 (GeForce 10, Tesla P40/P4)",
        _PASCAL_DP4A,
        None,
        (f"fp16 arithmetic at 1/64 of the fp32 rate ({_THROUGHPUT})", _FP64_1_32, _DP4A),
    ),
    (6, 2): CC(
        "Pascal",
        "GP10B (Jetson TX2)",
        _PASCAL_DP4A,
        None,
        (f"fp16 at twice the fp32 rate ({_THROUGHPUT})", _FP64_1_32, _DP4A),
    ),
    (7, 0): CC(
        "Volta", "GV100 (Tesla V100, TITAN V)", _VOLTA, "tensor cores", ("first-generation tensor cores: fp16 only",)
    ),
    (7, 2): CC(
        "Volta",
        "Xavier (Jetson AGX Xavier / Xavier NX)",
        _TC_INT8,
        "tensor cores",
        ("Jetson Xavier: fp16 and int8 tensor cores",),
    ),
    (7, 5): CC("Turing", "TU102/TU104/TU106/TU116/TU117", _TURING_NO_TC, None, ()),  # refined by name, see _turing
    (8, 0): CC("Ampere", "GA100 (A100, A30)", _AMPERE, "tensor cores", ("fp64 tensor cores",)),
    (8, 6): CC(
        "Ampere",
        "GA102/GA103/GA104/GA106/GA107 (RTX 30, RTX A-series, A10/A40)",
        _AMPERE,
        "tensor cores",
        (_FP64_1_64,),
        f"{SOURCE}; {_GA102_WP}",
    ),
    (8, 7): CC("Ampere", "GA10B (Jetson AGX Orin / Orin NX / Orin Nano)", _AMPERE, "tensor cores", ("Jetson Orin",)),
    (8, 9): CC(
        "Ada",
        "AD102/AD103/AD104/AD106/AD107 (RTX 40, RTX Ada, L4/L40/L40S)",
        _ADA_HOPPER,
        "tensor cores",
        (_FP64_1_64, f"fp8 in TransformerEngine needs CUDA >= 12.1 and cuBLASLt >= 12.1.3 ({_TE_GATES})"),
    ),
    (9, 0): CC(
        "Hopper",
        "GH100 (H100, H200, GH200)",
        _ADA_HOPPER,
        "tensor cores",
        ("fp64 tensor cores", "fp8 _scaled_mm needs row-major x column-major operands"),
    ),
    (10, 0): CC(
        "Blackwell", "GB100 (B200, GB200)", _BLACKWELL, "tensor cores", ("MXFP8/NVFP4 block-scaled tensor formats",)
    ),
    (10, 1): CC(
        "Blackwell",
        "Thor (Jetson Thor), numbered 10.1 up to CUDA 12.9",
        _BLACKWELL,
        "tensor cores",
        (f"CUDA 13.0 renamed Thor's compute capability from 10.1 to 11.0 ({_THOR})",),
        f"{SOURCE}; {_THOR}",
    ),
    (10, 3): CC(
        "Blackwell",
        "GB110 (B300, GB300: Blackwell Ultra)",
        _BLACKWELL,
        "tensor cores",
        ("Blackwell Ultra (B300/GB300): fp64 cut to about 1.25 TFLOPS per GPU",),
    ),
    (11, 0): CC(
        "Blackwell",
        "Thor (Jetson Thor), numbered 11.0 from CUDA 13.0",
        _BLACKWELL,
        "tensor cores",
        (f"CUDA 13.0 renamed Thor's compute capability from 10.1 to 11.0 ({_THOR})",),
        f"{SOURCE}; {_THOR}",
    ),
    (12, 0): CC(
        "Blackwell",
        "GB202/GB203/GB205/GB206/GB207 (RTX 50, RTX PRO Blackwell)",
        _BLACKWELL,
        "tensor cores",
        (_FP64_1_64, f"TransformerEngine: MXFP8 not supported on cc 12.0+ yet; NVFP4 is ({_TE_GATES})"),
    ),
    (12, 1): CC(
        "Blackwell",
        "GB10 (DGX Spark)",
        _BLACKWELL,
        "tensor cores",
        (f"TransformerEngine: MXFP8 not supported on cc 12.0+ yet; NVFP4 is ({_TE_GATES})",),
    ),
}

# cc with a GeForce/pro split of fp32-accumulate tensor rates (GA102 and Ada whitepapers: RTX 3090 / RTX 4090
# vs RTX A6000 / RTX 6000 Ada, A40, L40S).
_HALF_RATE_CCS = {(8, 6), (8, 9)}

# The device-name patterns below decide only Turing's chips (cc 7.5) and the GeForce/pro split of cc 8.6 and 8.9:
# compiled on the first such lookup, so the dashboard of any other GPU does not compile them before its first frame.
_NAME_PATTERNS = {
    # Turing chips without tensor cores: GTX 16xx, Quadro T400-T2000 and laptop T-series, MX450/MX550, TU116/TU117.
    "tu11x": r"\bgtx\s*16\d\d\b|\btu11[67]\b|\bmx\s*[45]50\b|(?:quadro\s+|\b)t(?:400|500|550|600|1000|1200|2000)\b",
    "tu10x": r"\brtx\b|\btesla\s+t4\b|(?:^|\s)t4(?:\s|$)|\btu10[246]\b|\btitan\s+rtx\b",
    "geforce": r"\bgeforce\b|\brtx\s*\d{4}\b(?!.*\bada\b)",
    "pro": r"\brtx\s+a\d{4}\b|\brtx\s+pro\b|\bada generation\b|\b(?:a10|a16|a40|l4|l40s?|a2)\b|\bquadro\b",
}


@functools.cache
def _name_pattern(kind: str) -> re.Pattern[str]:
    return re.compile(_NAME_PATTERNS[kind], re.I)


def _turing(name: str | None) -> tuple[dict[str, str], str | None, tuple[str, ...]]:
    if name and _name_pattern("tu11x").search(name):
        return (
            _TURING_NO_TC,
            None,
            (
                f"TU116/TU117: no tensor cores; fp16 runs on dedicated FP16 units at twice the fp32 rate ({_TURING})",
                _DP4A,
                _FP64_1_32,
            ),
        )
    if name and _name_pattern("tu10x").search(name):
        geforce = "GeForce: fp16 tensor math with fp32 accumulate runs at half rate (TITAN RTX: full rate)"
        return (
            _TC_INT8,
            "tensor cores",
            (f"TU102/TU104/TU106: fp16 and int8 tensor cores ({_TURING})", _FP64_1_32)
            + ((geforce,) if _name_pattern("geforce").search(name) and "titan" not in name.lower() else ()),
        )
    return (
        _TURING_NO_TC,
        None,
        (
            "tensor cores (fp16, int8) on TU102/TU104/TU106 only; GTX 16xx (TU116/TU117) have none and run fp16 "
            "on FP16 units at twice the fp32 rate; the device name decides",
            _FP64_1_32,
        ),
    )


def _rate_note(cc: tuple[int, int], name: str | None) -> tuple[str, ...]:
    if cc not in _HALF_RATE_CCS:
        return ()
    if not name:
        return (_HALF_RATE_UNKNOWN,)
    if _name_pattern("pro").search(name) and "geforce" not in name.lower():
        return (_PRO_FULL,)
    if _name_pattern("geforce").search(name):
        return (_GEFORCE_HALF,)
    return (_HALF_RATE_UNKNOWN,)


_CC_RE = re.compile(r"^\s*(\d{1,2})(?:\.(\d))?\s*$")
_SM_RE = re.compile(r"^\s*(?:sm|compute)_?(\d{1,2})(\d)[af]?\s*$", re.IGNORECASE)


def parse_cc(compute_capability: object) -> tuple[int, int] | None:
    """'9.0' / '9' / 'sm_90' / 'sm_100a' / 9.0 / (9, 0) -> (9, 0); anything else -> None."""
    if isinstance(compute_capability, tuple) and len(compute_capability) == 2:
        try:
            return int(compute_capability[0]), int(compute_capability[1])
        except (TypeError, ValueError):
            return None
    if isinstance(compute_capability, (int, float)) and not isinstance(compute_capability, bool):
        compute_capability = str(compute_capability)
    if not isinstance(compute_capability, str):
        return None
    m = _SM_RE.match(compute_capability)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = _CC_RE.match(compute_capability)
    if m:
        return int(m.group(1)), int(m.group(2) or 0)
    return None


def known_ccs() -> tuple[tuple[int, int], ...]:
    """Every compute capability the table names, in order."""
    return tuple(sorted(_TABLE))


def nvidia_arch(compute_capability: object, name: str | None = None) -> ArchInfo:
    """Compute capability (and, where one cc covers different chips, the device name) -> family and support.
    Unknown or unlisted cc -> family 'unknown' (a cc not in the table is not guessed from its neighbours).
    Never raises."""
    try:
        cc = parse_cc(compute_capability)
        if cc is None:
            return unknown_arch(SOURCE, f"compute capability {compute_capability!r} not recognised")
        row = _TABLE.get(cc)
        if row is None:
            return unknown_arch(SOURCE, f"compute capability {cc[0]}.{cc[1]} is not in the table")
        levels, matrix, notes = row.levels, row.matrix_unit, row.notes
        if cc == (7, 5):
            levels, matrix, notes = _turing(name)
        notes = tuple(notes) + _rate_note(cc, name)
        precisions = support(**levels)
        fp8 = precisions["fp8_e4m3"] == NATIVE
        return ArchInfo(
            family=row.family,
            precisions=precisions,
            fp8_dtype="float8_e4m3fn" if fp8 else None,
            fp8_e5m2_dtype="float8_e5m2" if fp8 else None,
            notes=notes,
            source=row.source if cc != (7, 5) else f"{SOURCE}; {_TURING}",
            matrix_unit=matrix,
        )
    except Exception as exc:
        return unknown_arch(SOURCE, f"compute capability lookup failed: {exc}")
