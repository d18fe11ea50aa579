"""run_benchmarks: every registered benchmark on every live device, each in the child-process runner."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpudash.plugin_manager.child_runs import (
    broken_result,
    plugin_device,
    plugin_task,
    run_in_children,
    time_limit,
    why_not_run,
)
from gpudash.plugin_manager.collect import collect_benchmarks
from gpudash.plugin_manager.factory import make_plugin_manager
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.reporting import ErrorReporter, report_to_stderr
from gpudash.plugins_api import SKIP
from gpudash.plugins_api.plain_data import PlainData

if TYPE_CHECKING:
    from gpudash.measure.runner import Task, TaskResult

DEFAULT_BENCH_TIMEOUT_S = 600.0


@dataclass
class BenchmarkRun(PlainData):
    """One plugin benchmark on one device: its bench-style results, or why there are none."""

    plugin: str
    benchmark: str
    device: str
    status: str  # "ok" | SKIP | ERROR
    summary: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)


def run_benchmarks(
    machine,
    pm: GpudashPluginManager | None = None,
    plugin_dirs=(),
    devices=None,
    budget_s: float = 2.0,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    on_result: Callable[[BenchmarkRun], None] | None = None,
    on_error: ErrorReporter | None = report_to_stderr,
) -> list[BenchmarkRun]:
    """Run every registered benchmark on every live device, each in the child-process runner.

    Each result dict has the bench contract keys (precision, op, shape, gflops, median_s, efficiency) plus
    "plugin", "benchmark" and "details"; efficiency is filled from gpudash's peak tables when the plugin left
    it out. A replayed machine is never measured: every run is a skip with "not run: replayed". `pm`,
    `plugin_dirs` and `on_error` as for run_checks.
    """
    from gpudash.knowledge import peaks_for

    pm = pm if pm is not None else make_plugin_manager(plugin_dirs, on_error=on_error)
    benchmarks = collect_benchmarks(pm)
    runs: list[BenchmarkRun] = []
    tasks: list[Task] = []
    started: list[tuple[BenchmarkRun, Any]] = []  # per task: its run, and the DeviceInfo (for its peaks)
    for dev in machine.devices if devices is None else devices:
        device = plugin_device(dev, machine)
        for reg in benchmarks:
            run = BenchmarkRun(reg.plugin, reg.name, device.key, SKIP)
            runs.append(run)
            verdict = why_not_run(pm, reg.plugin, device)
            if verdict is None:
                limit = time_limit(timeout_s, reg.obj, DEFAULT_BENCH_TIMEOUT_S)
                tasks.append(
                    plugin_task("run_benchmark", pm, reg, device, limit, benchmark=reg.name, budget_s=budget_s)
                )
                started.append((run, dev))
                continue
            run.status, run.summary = verdict
            if on_result:
                on_result(run)

    def finished(i: int, task_result: TaskResult) -> None:
        run, dev = started[i]
        if task_result.ok:
            run.status, run.results = "ok", list(task_result.value)
            _fill_efficiency(run.results, peaks_for(dev))
        else:
            run.status, run.summary = broken_result(task_result.status, task_result.error, "benchmark")
        if on_result:
            on_result(run)

    run_in_children(tasks, finished, cancel)
    return runs


def _fill_efficiency(results: list[dict[str, Any]], peaks: dict[str, Any]) -> None:
    for item in results:
        peak = peaks.get(item.get("precision"))
        if item.get("efficiency") is None and peak and item.get("gflops"):
            item["efficiency"] = item["gflops"] / peak.gflops


def benchmark_results(runs: list[BenchmarkRun]) -> dict[str, list[dict[str, Any]]]:
    """Successful plugin benchmark results per device key, ready for the bench JSON `results` list."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        out.setdefault(run.device, []).extend(run.results)
    return out
