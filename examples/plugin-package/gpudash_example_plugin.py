"""An example gpudash plugin: one benchmark and one check, using only gpudash.plugins_api.

Install it (`pip install .` in this folder), then `gpudash plugins` lists it, `gpudash check` runs its check
and the lead's `gpudash bench` runs its benchmark. torch is imported inside `run`, never at module level, so
`gpudash plugins` stays instant.
"""

from __future__ import annotations

import os
import statistics
import time

from gpudash.plugins_api import Benchmark, BenchResult, Check, Device, hookimpl

__version__ = "0.1.0"


class Axpy(Benchmark):
    """y = a * x + y over a large vector: a memory-bound op, so it measures bandwidth more than compute."""

    name = "axpy"
    description = "a * x + y on 4M elements, fp32 and bf16"
    timeout_s = 120

    def run(self, device: Device, budget_s: float) -> list[BenchResult]:
        import torch

        where = device.torch_device
        if where is None:
            raise RuntimeError(f"torch does not see {device.key}")
        sync = torch.cuda.synchronize if where.startswith("cuda") else (lambda: None)
        n = 1 << 22
        results = []
        for precision, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            x = torch.randn(n, device=where).to(dtype)
            y = torch.randn(n, device=where).to(dtype)
            y.add_(x, alpha=0.5)  # warm-up
            sync()
            times = []
            deadline = time.perf_counter() + budget_s / 2
            while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 100):
                start = time.perf_counter()
                y.add_(x, alpha=0.5)
                sync()
                times.append(time.perf_counter() - start)
            median = statistics.median(times)
            moved = 3 * n * x.element_size()  # read x, read y, write y
            results.append(
                BenchResult(
                    precision, "axpy", [n], 2 * n / median / 1e9, median, details={"gb_per_s": moved / median / 1e9}
                )
            )
        return results


class TorchThreads(Check):
    """torch's intra-op threads against the CPUs this process may use: too few leaves the CPU idle."""

    name = "torch_threads"
    description = "torch intra-op threads vs the CPUs available to this process"

    def run(self, device: Device) -> object:
        if device.vendor != "cpu":
            return self.skipped(f"a CPU check; {device.key} is a {device.vendor} GPU")
        import torch

        available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        threads = torch.get_num_threads()
        details = {"torch_threads": threads, "available_cpus": available}
        if threads >= available:
            return self.passed(f"torch uses {threads} threads for {available} available CPUs", details=details)
        return self.warned(
            f"torch uses {threads} threads but {available} CPUs are available",
            remediation="Unset OMP_NUM_THREADS or set it to the CPU count (or call "
            "torch.set_num_threads) so CPU work uses every core.",
            env={"OMP_NUM_THREADS": str(available)},
            details=details,
        )


@hookimpl
def register_benchmarks(register):
    register(Axpy())


@hookimpl
def register_checks(register):
    register(TorchThreads())
