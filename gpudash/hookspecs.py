"""The hooks a gpudash plugin may implement (pluggy specs, project "gpudash").

Every hook takes a `register` callback (llm's pattern): the plugin calls it once per thing it adds, so one
small signature serves any number of benchmarks, checks or kernels. Hooks run in the gpudash process while
plugins are collected; keep them cheap (no torch import, no device work): the work goes into
`Check.run` and `Benchmark.run`, which gpudash runs in a child process with a time limit.

A module-level function named after one of these hooks and marked with `gpudash.plugins_api.hookimpl`
implements it. A marked function whose name is not a hook here is a load error for that plugin, so a typo
("register_chekcs") is reported instead of silently ignored.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("gpudash")


@hookspec
def register_benchmarks(register):
    """Add benchmarks: call `register(benchmark)` with `gpudash.plugins_api.Benchmark` instances.

    A benchmark has a unique `name` within its plugin and a `run(device, budget_s)` method returning
    `BenchResult`s (precision, op, shape, gflops, median_s, efficiency, details). gpudash runs it in a child
    process for each live device it is asked to benchmark, never on a replayed machine.
    """


@hookspec
def register_checks(register):
    """Add checks: call `register(check)` with `gpudash.plugins_api.Check` instances.

    A check has a unique `name` within its plugin and a `run(device)` method returning one `CheckResult` with
    status pass, warn, fail or skip, a one-line summary, a remediation, and environment variables to set.
    `gpudash check` runs every check on every device in a child process. Checks with `needs_device = True`
    (the default) are skipped on a replayed machine ("not run: replayed"); table-based checks still run.
    """


@hookspec
def register_kernels(register):
    """Add operation kernels for adaptive dispatch: call `register(kernel)` with `gpudash.plugins_api.Kernel`s.

    A kernel names its `op` ("matmul"), the precision it computes in, a `predicate(KernelQuery) -> bool` and
    an `implementation`. A dispatcher (the built-in adaptive_kernels plugin for "matmul") gathers them with
    `gpudash.ops.collect_kernels(op)` and calls the highest-priority kernel whose predicate holds.
    """
