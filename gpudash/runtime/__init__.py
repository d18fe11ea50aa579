"""Run-time helpers for training code: operation routing, memory management, a profiler, the batch size.

    from gpudash.runtime import (get_optimal_device, memory_management, profiler, get_performance_stats,
                                 optimize_batch_size, get_enhanced_optimizer)
    fft_device = get_optimal_device("fft")        # "cpu" where FFTs are routed to the CPU (RDNA1), else the GPU
    with memory_management("epoch") as report:    # measures before/after, frees what the platform allows
        with profiler.profile("forward"):
            out = model(batch)
    get_performance_stats()["operation_times"]["forward"]["mean_s"]
    optimize_batch_size(256)                      # the per-device batch `gpudash export` would write

Every decision is the export's rule (gpudash.recommend), for the first GPU (else the CPU) of this machine or of a
replayed snapshot (replay="snapshot.json" or GPUDASH_REPLAY). Importing this package imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "get_optimal_device": "routing",
    "optimize_tensor_for_operation": "routing",
    "memory_management": "memory",
    "MemoryReport": "memory",
    "Profiler": "profiling",
    "profiler": "profiling",
    "profile": "profiling",
    "get_performance_stats": "profiling",
    "BatchPlan": "batch",
    "batch_plan": "batch",
    "optimize_batch_size": "batch",
    "RuntimeOptimizer": "optimizer",
    "get_enhanced_optimizer": "optimizer",
    "seed_env_notes": "platform",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = sorted(_LAZY)
