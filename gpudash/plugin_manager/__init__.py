"""Find and load gpudash plugins, tolerating broken ones; collect and run their checks and benchmarks.

Plugins come from the entry-point group "gpudash" (installed packages, gpudash's own built-ins included) and
from one-file plugins in plugin directories (`--plugins-dir DIR`, the `plugin_dirs` config key).
GPUDASH_LOAD_PLUGINS=name1,name2 loads only those. A plugin that fails to import, uses an unknown hook name,
or raises while registering is recorded with its error, reported on stderr, and left out; the others load.

Third-party plugins are imported and registered in one child process only (vetting); one that crashes or
hangs there is recorded as failed, and of the others the child sends back a catalog, from which this process
knows them without importing them. gpudash's own built-ins are trusted: imported and registered here.
Checks and benchmarks run in the child-process runner with a time limit, so a plugin that raises, hangs or
kills its process becomes a result with its error; what comes back is checked before it is shown.

The parent side, in the order a load runs:
    records   PluginRecord, Registered, GPUDASH_LOAD_PLUGINS, plugin prints kept off stdout
    manager   GpudashPluginManager: pluggy plus records, hook-name checks, sources for a child
    sources   entry points and one-file plugin directories; the import path a child gets
    loading   vetting third-party plugins in a child, then make_plugin_manager
    catalog   what the vetting child reports of a plugin, and its checked form here
    checked   checking results from children: statuses, finite numbers, safe bounded text
    collect   calling the register_* hooks: collect_checks/benchmarks/kernels, list_plugins
    runs      run_checks, run_benchmarks: each a task in the child-process runner
The child side:
    host      the task functions the runner calls in the child (vetting, a check, a benchmark)
"""

from __future__ import annotations

from gpudash.plugin_manager.collect import (
    collect_benchmarks,
    collect_checks,
    collect_kernels,
    kernel_plugin_dirs,
    kernels_from_plugins,
    list_plugins,
    use_kernel_plugin_dirs,
)
from gpudash.plugin_manager.loading import make_plugin_manager
from gpudash.plugin_manager.manager import HOOKS, GpudashPluginManager
from gpudash.plugin_manager.records import (
    LOAD_ENV,
    ErrorReporter,
    PluginRecord,
    Registered,
    allowed_names,
    report_to_stderr,
)
from gpudash.plugin_manager.runs import BenchmarkRun, benchmark_results, plugin_device, run_benchmarks, run_checks

__all__ = [
    "HOOKS",
    "LOAD_ENV",
    "BenchmarkRun",
    "ErrorReporter",
    "GpudashPluginManager",
    "PluginRecord",
    "Registered",
    "allowed_names",
    "benchmark_results",
    "collect_benchmarks",
    "collect_checks",
    "collect_kernels",
    "kernel_plugin_dirs",
    "kernels_from_plugins",
    "list_plugins",
    "make_plugin_manager",
    "plugin_device",
    "report_to_stderr",
    "run_benchmarks",
    "run_checks",
    "use_kernel_plugin_dirs",
]
