"""NVIDIA compute capability -> architecture family and per-precision hardware support.

Sources: products per cc from developer.nvidia.com/cuda-gpus and /cuda-legacy-gpus; precision columns from the PyTorch and TransformerEngine gates plus NVIDIA architecture
facts. The gates encoded here:
  tf32, bf16 native from cc 8.0   (torch is_bf16_supported(including_emulation=False): major >= 8)
  fp8 native from cc 8.9          (torch scaled_mm_arch_allowed: major >= 9 or 8.9)
  fp4 native from cc 10.0         (TransformerEngine is_nvfp4_available: cc >= 10.0)
Choices where the sources leave room (documented, and the tests pin them):
  - fp64 is "native" on every NVIDIA GPU: it runs on real FP64 units, only slowly on consumer parts,
    so the low rate goes into `notes` rather than into the support level.
  - int8 means tensor-core int8 GEMM. 6.0 (P100) and 7.0 (V100) have none: "absent". 6.1/6.2 only have
    the dp4a vector instruction: "emulated". Tensor int8 is native from 7.2.
  - bf16 below 8.0 is "emulated" (torch runs it through fp32).
  - Kepler/Maxwell are named but get only fp32/fp64 native; current torch wheels no longer target them.
"""

from __future__ import annotations

import re

from gpudash.knowledge.levels import ABSENT, EMULATED, NATIVE, ArchInfo, support, unknown_arch

SOURCE = "developer.nvidia.com/cuda-gpus; PyTorch and TransformerEngine gates"

_GEFORCE_HALF = "GeForce: fp16/bf16 tensor cores run at half rate with fp32 accumulate"
_FP64_1_32 = "fp64 at 1/32 of the fp32 rate on consumer parts"
_FP64_1_64 = "fp64 at 1/64 of the fp32 rate on consumer parts"

# Shared rows. N/E/A spelled out per column so each row reads like a row of the sources' tables.
_PASCAL_P100 = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=ABSENT)
_PASCAL_CONSUMER = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=EMULATED)
_VOLTA = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=ABSENT)
_VOLTA_XAVIER = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=NATIVE)
_TURING = dict(fp64=NATIVE, fp32=NATIVE, fp16=NATIVE, bf16=EMULATED, int8=NATIVE)
_AMPERE = dict(fp64=NATIVE, fp32=NATIVE, tf32=NATIVE, fp16=NATIVE, bf16=NATIVE, int8=NATIVE)
_ADA_HOPPER = dict(_AMPERE, fp8_e4m3=NATIVE, fp8_e5m2=NATIVE)
_BLACKWELL = dict(_ADA_HOPPER, fp4=NATIVE)

# (major, minor) -> (family, support row, notes)
_TABLE: dict[tuple[int, int], tuple[str, dict[str, str], tuple[str, ...]]] = {
    (6, 0): ("Pascal", _PASCAL_P100, ("fp16 at 2x the fp32 rate, no tensor cores",)),
    (6, 1): (
        "Pascal",
        _PASCAL_CONSUMER,
        ("fp16 at 1/64 rate on consumer Pascal", _FP64_1_32, "int8 via dp4a only, no tensor cores"),
    ),
    (6, 2): (
        "Pascal",
        _PASCAL_CONSUMER,
        ("fp16 at 1/64 rate on consumer Pascal", _FP64_1_32, "int8 via dp4a only, no tensor cores"),
    ),
    (7, 0): ("Volta", _VOLTA, ("first-generation tensor cores: fp16 only",)),
    (7, 2): ("Volta", _VOLTA_XAVIER, ("Jetson Xavier",)),
    (7, 5): ("Turing", _TURING, (_FP64_1_32, "GeForce: fp16 tensor cores run at half rate with fp32 accumulate")),
    (8, 0): ("Ampere", _AMPERE, ()),
    (8, 6): ("Ampere", _AMPERE, (_GEFORCE_HALF, _FP64_1_64)),
    (8, 7): ("Ampere", _AMPERE, ("Jetson Orin",)),
    (8, 9): (
        "Ada",
        _ADA_HOPPER,
        (_GEFORCE_HALF, _FP64_1_64, "fp8 in TransformerEngine needs CUDA >= 12.1 and cuBLASLt >= 12.1.3"),
    ),
    (9, 0): ("Hopper", _ADA_HOPPER, ("fp8 _scaled_mm needs row-major x column-major operands",)),
    (10, 0): ("Blackwell", _BLACKWELL, ()),
    (10, 3): ("Blackwell", _BLACKWELL, ("Blackwell Ultra (B300): fp64 cut sharply; scale unverified",)),
    (11, 0): ("Blackwell", _BLACKWELL, ("Jetson Thor: fp64 and fp4 support unverified",)),
    (12, 0): (
        "Blackwell",
        _BLACKWELL,
        (_FP64_1_64, "TransformerEngine: MXFP8 not supported on cc 12.0+ yet; NVFP4 is"),
    ),
    (12, 1): ("Blackwell", _BLACKWELL, (_FP64_1_64, "GB10 (DGX Spark): assumed as cc 12.0, unverified")),
}

# Pre-Pascal majors: named, conservative (fp16 stored but computed in fp32).
_OLD = {3: "Kepler", 5: "Maxwell"}

_CC_RE = re.compile(r"^\s*(\d{1,2})(?:\.(\d))?\s*$")
_SM_RE = re.compile(r"^\s*sm_?(\d{1,2})(\d)\s*$", re.IGNORECASE)


def parse_cc(compute_capability: object) -> tuple[int, int] | None:
    """'9.0' / '9' / 'sm_90' / 9.0 / (9, 0) -> (9, 0); anything else -> None."""
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


def _row(cc: tuple[int, int]):
    if cc in _TABLE:
        return _TABLE[cc]
    # An unlisted minor inside a known major (e.g. 10.1, Thor's old number) inherits the closest lower one.
    lower = [k for k in _TABLE if k[0] == cc[0] and k[1] < cc[1]]
    return _TABLE[max(lower)] if lower else None


def nvidia_arch(compute_capability: str | None) -> ArchInfo:
    """Compute capability -> family and native precisions. Unknown input -> family 'unknown'. Never raises."""
    try:
        cc = parse_cc(compute_capability)
        if cc is None:
            return unknown_arch(SOURCE, f"compute capability {compute_capability!r} not recognised")
        if cc[0] in _OLD:
            fp16 = NATIVE if cc == (5, 3) else EMULATED  # Jetson TX1 (5.3) has native fp16
            return ArchInfo(
                _OLD[cc[0]],
                support(fp64=NATIVE, fp32=NATIVE, fp16=fp16, bf16=EMULATED),
                None,
                None,
                ("not targeted by current PyTorch wheels",),
                SOURCE,
            )
        row = _row(cc)
        if row is None:
            return unknown_arch(SOURCE, f"compute capability {cc[0]}.{cc[1]} is not in the table")
        family, levels, notes = row
        precisions = support(**levels)
        fp8 = precisions["fp8_e4m3"] == NATIVE
        return ArchInfo(
            family=family,
            precisions=precisions,
            fp8_dtype="float8_e4m3fn" if fp8 else None,
            fp8_e5m2_dtype="float8_e5m2" if fp8 else None,
            notes=tuple(notes),
            source=SOURCE,
        )
    except Exception as exc:
        return unknown_arch(SOURCE, f"compute capability lookup failed: {exc}")
