"""A working one-file plugin: a table-style check and a pure-Python benchmark (no torch: fast)."""

import time

from gpudash.plugins_api import Benchmark, BenchResult, Check, hookimpl

__version__ = "1.2.3"


class Always(Check):
    name = "always_passes"
    needs_device = False

    def run(self, device):
        return self.passed(f"looked at {device.key}", env={"SAMPLE_VAR": "1"}, details={"vendor": device.vendor})


class NeedsDevice(Check):
    name = "needs_the_device"

    def run(self, device):
        return self.passed("ran on the device")


class PythonLoop(Benchmark):
    name = "python_loop"

    def run(self, device, budget_s):
        n = 20000
        start = time.perf_counter()
        total = 0.0
        for i in range(n):
            total += i * 0.5
        elapsed = time.perf_counter() - start
        return [BenchResult("fp64", "python_mul_add", [n], 2 * n / elapsed / 1e9, elapsed)]


@hookimpl
def register_checks(register):
    register(Always(), NeedsDevice())


@hookimpl
def register_benchmarks(register):
    register(PythonLoop)  # a class is accepted too
