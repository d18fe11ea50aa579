"""The public plugin API: the one gpudash module a plugin imports.

A plugin is a module (an installed package's entry point in the group "gpudash", or a one-file plugin in a
plugins directory) with functions marked `@hookimpl`, named after the hooks in `gpudash.hookspecs`:

    from gpudash.plugins_api import Check, hookimpl

    class Threads(Check):
        name = "torch_threads"
        def run(self, device):
            return self.passed("ok")

    @hookimpl
    def register_checks(register):
        register(Threads())

Everything here is plain data and small functions: importable without torch or Textual, so listing plugins
stays instant. Plugin code imports torch lazily, inside `run`. Checks and benchmarks run in a child process
with a time limit (gpudash.plugin_manager.host), never in the gpudash process itself.

Import from here, not from the submodules (devices, arch, checks, benchmarks, kernels): only these names are
the API.
"""

from __future__ import annotations

import pluggy

from gpudash.plugins_api.arch import Arch, arch_of, peak_gflops
from gpudash.plugins_api.benchmarks import Benchmark, BenchResult, bench_result_dict
from gpudash.plugins_api.checks import (
    ERROR,
    FAIL,
    NOT_RUN_REPLAYED,
    PASS,
    SKIP,
    STATUSES,
    WARN,
    Check,
    CheckResult,
)
from gpudash.plugins_api.devices import Device, local_device
from gpudash.plugins_api.kernels import Kernel, KernelQuery
from gpudash.precisions import PRECISIONS

PROJECT = "gpudash"
ENTRY_POINT_GROUP = "gpudash"
API_VERSION = 1

hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "ERROR",
    "FAIL",
    "NOT_RUN_REPLAYED",
    "PASS",
    "PRECISIONS",
    "PROJECT",
    "SKIP",
    "STATUSES",
    "WARN",
    "Arch",
    "BenchResult",
    "Benchmark",
    "Check",
    "CheckResult",
    "Device",
    "Kernel",
    "KernelQuery",
    "arch_of",
    "bench_result_dict",
    "hookimpl",
    "local_device",
    "peak_gflops",
]
