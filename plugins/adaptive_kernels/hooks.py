"""The adaptive_kernels plugin's hooks: its matmul kernels and its benchmark (no torch at import)."""

from __future__ import annotations

from gpudash.plugins_api import hookimpl

from .kernels import BUILTIN_KERNELS


@hookimpl
def register_kernels(register):
    register(*BUILTIN_KERNELS)


@hookimpl
def register_benchmarks(register):
    from .benchmark import AdaptiveMatmulBenchmark

    register(AdaptiveMatmulBenchmark())
