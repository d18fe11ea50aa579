"""The ROCm facts the checks encode, each with its source. Pure data: no torch.

Sources: PyTorch's ROCm wheel target lists (.ci/docker/manywheel/build.sh), CUDAHooks.cpp and ATen/Context.h
(hipBLASLt lists, env vars), the ROCm and PyTorch issues each entry names, Musubi Tuner's ROCm compatibility
guide, and an RX 5600 XT user's GPU enhancement summary. The hipBLASLt lists are upstream
PyTorch's (CUDAHooks getHipblasltSupportedArchs / getHipblasltPreferredArchs); ROCm's own PyTorch fork adds
gfx110x and gfx115x to both (ROCm/pytorch#2742), and the lists move quickly, so a live device also reports
torch.backends.cuda.preferred_blas_library().
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Version = tuple[int, int]

BLAS_ENV = "TORCH_BLAS_PREFER_HIPBLASLT"  # alias of TORCH_BLAS_PREFER_CUBLASLT: 1 = hipBLASLt, 0 = hipBLAS

# (first ROCm version that lists them, gfx targets)
HIPBLASLT_SUPPORTED: tuple[tuple[Version, tuple[str, ...]], ...] = (
    ((0, 0), ("gfx90a", "gfx942")),
    ((6, 3), ("gfx1100", "gfx1101", "gfx1103", "gfx1200", "gfx1201", "gfx908")),
    ((7, 0), ("gfx950", "gfx1150", "gfx1151")),
    ((7, 2), ("gfx1250",)),
)
HIPBLASLT_PREFERRED: tuple[tuple[Version, tuple[str, ...]], ...] = (
    ((0, 0), ("gfx90a", "gfx942")),
    ((6, 4), ("gfx1200", "gfx1201")),
    ((7, 0), ("gfx950",)),
)
HIPBLASLT_SOURCE = "PyTorch aten/src/ATen/cuda/detail/CUDAHooks.cpp hipBLASLt supported/preferred lists"

RDNA1 = ("gfx1010", "gfx1011", "gfx1012")
RDNA3 = ("gfx1100", "gfx1101", "gfx1102", "gfx1103")
RDNA35_BF16_PARTIAL = ("gfx1150", "gfx1151")  # the compatibility guide's "partial" rows
RDNA4 = ("gfx1200", "gfx1201")

_GFX = re.compile(r"gfx[0-9a-f]+", re.IGNORECASE)


def parse_gfx(value: object) -> str | None:
    """'gfx942:sramecc+:xnack-' -> 'gfx942'."""
    if not isinstance(value, str):
        return None
    match = _GFX.search(value.split(":")[0])
    return match.group(0).lower() if match else None


def listed_since(table: tuple[tuple[Version, tuple[str, ...]], ...], gfx: str) -> Version | None:
    """The first ROCm version whose list has `gfx`, or None if no version does."""
    return next((since for since, targets in table if gfx in targets), None)


def version_text(version: Version | None) -> str:
    if version is None:
        return "unknown"
    return "any" if version == (0, 0) else f"{version[0]}.{version[1]}"


@dataclass(frozen=True)
class KnownIssue:
    targets: tuple[str, ...]
    status: str  # "warn" or "fail"
    summary: str
    remediation: str
    env: dict[str, str] = field(default_factory=dict)
    refs: tuple[str, ...] = ()
    needs_hipblaslt: bool = False  # the env advice selects hipBLASLt: only where it is supported
    # Precisions whose results the issue puts in doubt. Which dtype to train in is then not this table's to say:
    # the check asks gpudash's decision (gpudash.amp.precision_advice), the one the export and AmpConfig give.
    precisions: tuple[str, ...] = ()


KNOWN_ISSUES: tuple[KnownIssue, ...] = (
    KnownIssue(
        RDNA35_BF16_PARTIAL,
        "warn",
        "bf16 is partial: a bf16 accumulation crash at small batch sizes and NaN with Adam beta2 < 0.97 "
        "reported; the ROCm compatibility guide also reports bf16->fp32 giving zeros (the device checks test it)",
        "Where bf16 tensors are used, convert them to fp32 on the CPU (t.cpu().float()), load caches with "
        "dtype=float32 and check for NaN. For hipErrorLaunchFailure core dumps set the variables below and clear "
        "~/.config/miopen and ~/.cache/miopen.",
        {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1", "MIOPEN_DEBUG_CONV_DIRECT": "0"},
        ("ROCm/legacy-rocm-build#6034", "Musubi Tuner ROCm compatibility guide"),
        precisions=("bf16",),
    ),
    KnownIssue(
        RDNA35_BF16_PARTIAL,
        "warn",
        "fp32 matmul reported far slower than fp16 here",
        "Train with fp16 or bf16 autocast rather than fp32; enable TunableOp when benchmarking.",
        {"PYTORCH_TUNABLEOP_ENABLED": "1"},
        ("ROCm/legacy-rocm-build#4499", "ROCm/legacy-rocm-build#5807"),
    ),
    KnownIssue(
        RDNA3,
        "warn",
        "bf16 GEMMs through rocBLAS reported wrong on gfx1100, and bf16 loads returning zeros on RDNA3; the ROCm "
        "compatibility guide disables bf16 on RDNA3",
        "Route GEMMs through hipBLASLt where it supports this target (set below when it does): hipBLASLt fixed "
        "the rocBLAS bf16 GEMM drift.",
        {"TORCH_BLAS_PREFER_HIPBLASLT": "1"},
        ("pytorch/pytorch#189394", "modular/modular#5466", "Musubi Tuner ROCm compatibility guide"),
        needs_hipblaslt=True,
        precisions=("bf16",),
    ),
    KnownIssue(
        ("gfx1201",),
        "warn",
        "hipBLASLt fp32 matmul reported silently wrong (mostly zeros, no error) on gfx1201",
        "Use hipBLAS for GEMMs; to confirm on this machine, compare a large fp32 matmul against the CPU "
        "(HIPBLASLT_LOG_MASK=32 prints hipblaslt-bench repro lines).",
        {"TORCH_BLAS_PREFER_HIPBLASLT": "0"},
        ("ROCm/rocm-libraries#5706",),
    ),
    KnownIssue(
        RDNA1,
        "warn",
        "RDNA1 has no hipBLASLt (torch warns and falls back to hipBLAS), is in no official PyTorch ROCm wheel "
        "(HSA_OVERRIDE_GFX_VERSION spoofing has given wrong results), and has no bf16 hardware",
        "Use hipBLAS directly (set below) and run FFTs on the CPU; the enhancement summary trained without mixed "
        "precision here.",
        {"TORCH_BLAS_PREFER_HIPBLASLT": "0"},
        (
            "RX 5600 XT GPU enhancement summary (user report)",
            "PyTorch .ci/docker/manywheel/build.sh ROCm targets",
            "ROCm/legacy-rocm-build#2048",
        ),
        precisions=("bf16",),
    ),
)

# Targets with no issue in the table, and what the table does say about them (shown on a pass).
NOTES: dict[str, str] = {
    "gfx1200": "RDNA4: full bf16 support per the ROCm compatibility guide",
    "gfx942": "fp8 on MI300 uses the FNUZ dtypes (float8_e4m3fnuz, max 240), not float8_e4m3fn",
}

# Operations the enhancement summary routes to the CPU, by gfx target.
FFT_ON_CPU = {
    gfx: "the GPU enhancement summary (RX 5600 XT, ROCm 6.2) saw system hangs in FFTs and routes them to the CPU"
    for gfx in RDNA1
}
