"""Find and load gpudash plugins, tolerating broken ones; collect and run their checks and benchmarks.

Plugins come from the entry-point group "gpudash" (installed packages, gpudash's own built-ins included) and
from one-file plugins in plugin directories (`--plugins-dir DIR`, the `plugin_dirs` config key).
GPUDASH_LOAD_PLUGINS=name1,name2 loads only those. A plugin that fails to import, uses an unknown hook name,
or raises while registering is recorded with its error, reported on stderr, and left out; the others load.

Third-party plugins are first imported and registered in one child process (vetting); one that crashes or
hangs there is recorded as failed and never imported here. gpudash's own built-ins are trusted, not vetted.
Only registration runs in this process. Checks and benchmarks run in the child-process runner with a time
limit (gpudash.plugin_host on the child side), so a plugin that raises, hangs or kills its process becomes a
result with its error.

One module per step:
    records        PluginRecord, Registered: what is kept about each plugin and what it registered
    reporting      load errors to stderr; plugin code run with its prints off stdout
    selection      GPUDASH_LOAD_PLUGINS
    manager        GpudashPluginManager: pluggy plus records, hook-name checks, sources for a child
    entry_points   plugins from installed packages
    plugin_files   one-file plugins from plugin directories
    vetting        the third-party candidates, tried in a child before this process imports them
    factory        make_plugin_manager
    collect        calling the register_* hooks: collect_checks/benchmarks/kernels, list_plugins
    child_runs     what running in the child-process runner shares
    checks         run_checks
    benchmarks     run_benchmarks, BenchmarkRun
"""

from __future__ import annotations

from gpudash.plugin_manager.benchmarks import (
    DEFAULT_BENCH_TIMEOUT_S,
    BenchmarkRun,
    benchmark_results,
    run_benchmarks,
)
from gpudash.plugin_manager.checks import DEFAULT_CHECK_TIMEOUT_S, run_checks
from gpudash.plugin_manager.child_runs import child_env, plugin_device
from gpudash.plugin_manager.collect import (
    collect_benchmarks,
    collect_checks,
    collect_kernels,
    kernels_from_plugins,
    list_plugins,
)
from gpudash.plugin_manager.factory import make_plugin_manager
from gpudash.plugin_manager.manager import HOOKS, GpudashPluginManager
from gpudash.plugin_manager.records import ENTRY_POINT, FILE, IN_PROCESS, PluginRecord, Registered
from gpudash.plugin_manager.reporting import ErrorReporter, report_to_stderr
from gpudash.plugin_manager.selection import LOAD_ENV, allowed_names

# __all__ is the API; the timeouts, source labels, ErrorReporter, report_to_stderr (the CLI's default reporter)
# and child_env are importable from here as well.
__all__ = [
    "HOOKS",
    "LOAD_ENV",
    "BenchmarkRun",
    "GpudashPluginManager",
    "PluginRecord",
    "Registered",
    "allowed_names",
    "benchmark_results",
    "collect_benchmarks",
    "collect_checks",
    "collect_kernels",
    "kernels_from_plugins",
    "list_plugins",
    "make_plugin_manager",
    "plugin_device",
    "run_benchmarks",
    "run_checks",
]
