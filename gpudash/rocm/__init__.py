"""ROCm workarounds for training code: the compatibility guide's bf16 fixes as functions, and its conversion table.

    from gpudash.rocm import (needs_bf16_workarounds, bf16_to_float32, load_safetensors_float32,
                              save_cache, cache_to_cpu, clamp_nonfinite, conversion_matrix_report)

Each function is the plain operation on devices that do not need a workaround (NVIDIA, the CPU, CDNA, RDNA4),
and the guide's fix on those that do (RDNA3, RDNA3.5 by gpudash's tables). Importing this package imports
no torch; safetensors is optional (the functions that need it say so when it is missing).
"""

from __future__ import annotations

from gpudash.rocm.affected import needs_bf16_workarounds
from gpudash.rocm.conversions import CONVERSION_MATRIX, ConversionRow, conversion_matrix_report
from gpudash.rocm.workarounds import (
    CacheReport,
    MissingDependencyError,
    bf16_to_float32,
    cache_to_cpu,
    clamp_nonfinite,
    count_nonfinite,
    load_safetensors_float32,
    save_cache,
)

__all__ = [
    "CONVERSION_MATRIX",
    "CacheReport",
    "ConversionRow",
    "MissingDependencyError",
    "bf16_to_float32",
    "cache_to_cpu",
    "clamp_nonfinite",
    "conversion_matrix_report",
    "count_nonfinite",
    "load_safetensors_float32",
    "needs_bf16_workarounds",
    "save_cache",
]
