"""Running plugin checks and benchmarks: each on each device as one task of the child-process runner.

The child (gpudash.plugin_manager.host) re-creates the plugin manager from the same sources, so a check or
benchmark that raises, hangs or kills its process becomes a result with its error, and the next one starts in
a fresh child. run_checks returns CheckResults; run_benchmarks returns BenchmarkRuns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpudash.plain_text import one_line
from gpudash.plugin_manager import checked
from gpudash.plugin_manager.collect import collect_benchmarks, collect_checks
from gpudash.plugin_manager.limits import default_settings, limits_for
from gpudash.plugin_manager.loading import make_plugin_manager
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import ErrorReporter, Registered, report_to_stderr
from gpudash.plugin_manager.sources import child_env
from gpudash.plugins_api import ERROR, NOT_RUN_REPLAYED, SKIP, CheckResult, Device
from gpudash.plugins_api.plain_data import PlainData

if TYPE_CHECKING:
    from gpudash.measure.runner import Task, TaskResult


def plugin_device(device, machine) -> Device:
    """gpudash's DeviceInfo as the plain Device a plugin receives (JSON-safe: it crosses into the child)."""
    rt = machine.runtime
    extra = json.loads(json.dumps(device.extra or {}, default=str))
    return Device(
        vendor=device.vendor,
        index=device.index,
        name=device.name,
        compute_capability=device.compute_capability,
        gfx_target=device.gfx_target,
        torch_index=device.torch_index,
        memory_total_bytes=device.memory_total_bytes,
        multiprocessors=device.multiprocessors,
        max_clock_mhz=device.max_clock_mhz,
        cpu_features=list(device.cpu_features or []),
        runtime={"torch": rt.torch, "cuda": rt.cuda, "hip": rt.hip, "driver": rt.driver},
        replayed=bool(machine.replayed),
        extra=extra,
    )


def why_not_run(
    pm: GpudashPluginManager, plugin: str, device: Device, needs_device: bool = True
) -> tuple[str, str] | None:
    """(status, summary) when a plugin's check or benchmark must not start on `device`; None when it may."""
    if device.replayed and needs_device:
        return SKIP, NOT_RUN_REPLAYED
    if not pm.runs_in_child(plugin):
        return ERROR, "registered in-process: a child process cannot load it"
    return None


def plugin_task(
    function: str, pm: GpudashPluginManager, reg: Registered, device: Device, timeout_s: float, **kwargs: Any
) -> Task:
    """The runner task that calls gpudash.plugin_manager.host.<function> for `reg` on `device`, under the
    resource limits of the manager's config (gpudash.plugin_manager.limits)."""
    from gpudash.measure.runner import Task

    return Task(
        f"gpudash.plugin_manager.host:{function}",
        {"sources": pm.sources(), "plugin": reg.plugin, "device": device.to_dict(), **kwargs},
        timeout_s=timeout_s,
        name=f"{reg.plugin}/{reg.name} on {device.key}",
        limits=limits_for(pm.limits if pm.limits is not None else default_settings(), device.vendor),
    )


def time_limit(override: float | None, obj: Any, default: float) -> float:
    """The caller's limit, else the check's or benchmark's own `timeout_s`, else the default."""
    return float(override or getattr(obj, "timeout_s", None) or default)


def run_in_children(
    tasks: list[Task], finished: Callable[[int, TaskResult], None], cancel: threading.Event | None
) -> None:
    """Run the tasks; `finished(i, task_result)` hears about tasks[i] once, as soon as it is known."""
    if not tasks:
        return
    from gpudash.measure.runner import run_tasks

    position = {id(task): i for i, task in enumerate(tasks)}
    heard: set[int] = set()

    def on_result(task_result: TaskResult) -> None:
        heard.add(position[id(task_result.task)])
        finished(position[id(task_result.task)], task_result)

    for i, task_result in enumerate(run_tasks(tasks, cancel=cancel, on_result=on_result, env=child_env())):
        if i not in heard:  # cancelled before it started: the runner reports these only in its return value
            finished(i, task_result)


def broken_result(
    status: str, error: str | None, kind: str, plugin: str = "", limit: str | None = None
) -> tuple[str, str]:
    """The runner's verdict on a task that did not return (error, timeout, crash), as a status and summary;
    one that reached a resource limit says which ("plugin X reached its memory limit (8192 MiB)")."""
    if status == "cancelled":
        return SKIP, "cancelled"
    if limit is not None:
        return ERROR, one_line(f"plugin {plugin} reached its {limit}: the {kind} stopped ({error})")
    if status == "error":  # the runner gives "Type: message"
        kind_of, _, message = (error or "").partition(": ")  # the message is the plugin's: one safe line
        return ERROR, one_line(f"the {kind} raised {kind_of}: {message}" if message else f"the {kind} raised {error}")
    what = {"timeout": "did not finish", "crashed": "killed its process"}.get(status, status)
    return ERROR, one_line(f"the {kind} {what}: {error}")


DEFAULT_CHECK_TIMEOUT_S = 60.0


def run_checks(
    machine,
    pm: GpudashPluginManager | None = None,
    plugin_dirs=(),
    timeout_s: float | None = None,
    devices=None,
    cancel: threading.Event | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    on_error: ErrorReporter | None = report_to_stderr,
) -> list[CheckResult]:
    """Run every registered check on every device (or `devices`), each in the child-process runner.

    Checks that need the device are skipped on a replayed machine, and checks limited to other vendors are
    skipped, without starting anything. `timeout_s` overrides each check's own limit (default
    DEFAULT_CHECK_TIMEOUT_S). Results come back in device order, then plugin order; `on_result` hears each one
    as it finishes. Without `pm`, one is made from `plugin_dirs` with `on_error` (pass None inside the TUI:
    stderr would tear the screen).
    """
    pm = pm if pm is not None else make_plugin_manager(plugin_dirs, on_error=on_error)
    checks = collect_checks(pm)
    results: list[CheckResult | None] = []
    tasks: list[Task] = []
    started: list[tuple[int, Registered, Device]] = []  # per task: its slot in results, what runs, where
    for dev in machine.devices if devices is None else devices:
        device = plugin_device(dev, machine)
        for reg in checks:
            verdict = _why_check_not_run(pm, reg, device)
            if verdict is None:
                limit = time_limit(timeout_s, reg.obj, DEFAULT_CHECK_TIMEOUT_S)
                tasks.append(plugin_task("run_check", pm, reg, device, limit, check=reg.name))
                started.append((len(results), reg, device))
                results.append(None)
                continue
            result = CheckResult(reg.plugin, reg.name, device.key, *verdict)
            results.append(result)
            if on_result:
                on_result(result)

    def finished(i: int, task_result: TaskResult) -> None:
        slot, reg, device = started[i]
        if task_result.ok:  # checked: the child ran plugin code, and its answer goes to JSON and the screen
            result = checked.check_result(task_result.value, reg.plugin, reg.name, device.key)
        else:
            status, summary = broken_result(
                task_result.status, task_result.error, "check", reg.plugin, task_result.limit
            )
            result = CheckResult(
                reg.plugin, reg.name, device.key, status, summary, details={"output_tail": task_result.output_tail}
            )
        results[slot] = result
        if on_result:
            on_result(result)

    run_in_children(tasks, finished, cancel)
    return [r for r in results if r is not None]


def _why_check_not_run(pm: GpudashPluginManager, reg: Registered, device: Device) -> tuple[str, str] | None:
    vendors = getattr(reg.obj, "vendors", None)
    if vendors and device.vendor not in vendors:
        return SKIP, f"not run: for {', '.join(vendors)} devices only"
    return why_not_run(pm, reg.plugin, device, needs_device=getattr(reg.obj, "needs_device", True))


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
            try:
                run.results = checked.benchmark_results(task_result.value)
            except checked.Invalid as exc:
                run.status, run.summary = ERROR, f"the benchmark returned an invalid result: {exc}"
            else:
                run.status = "ok"
                for item in run.results:
                    item["plugin"], item["benchmark"] = run.plugin, run.benchmark
                _fill_efficiency(run.results, peaks_for(dev))
        else:
            run.status, run.summary = broken_result(
                task_result.status, task_result.error, "benchmark", run.plugin, task_result.limit
            )
        if on_result:
            on_result(run)

    run_in_children(tasks, finished, cancel)
    return runs


def _fill_efficiency(results: list[dict[str, Any]], peaks: dict[str, Any]) -> None:
    """Efficiency against gpudash's peak where the plugin left it out. A figure above an estimated peak proves
    the estimates wrong (they rest on the clock the OS reports, often a VM's base clock), so then, as in the
    built-in sweep (measure/bench/peaks.py), no efficiency is given against any estimated peak."""

    paired = [(item, peaks.get(str(item.get("precision")))) for item in results]
    disproved = any(
        peak is not None and peak.provenance != "spec" and (item.get("gflops") or 0.0) > peak.gflops
        for item, peak in paired
    )
    for item, peak in paired:
        if item.get("efficiency") is not None or not peak or not item.get("gflops"):
            continue
        if not (disproved and peak.provenance != "spec"):
            item["efficiency"] = item["gflops"] / peak.gflops


def benchmark_results(runs: list[BenchmarkRun]) -> dict[str, list[dict[str, Any]]]:
    """Successful plugin benchmark results per device key, ready for the bench JSON `results` list."""
    out: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        out.setdefault(run.device, []).extend(run.results)
    return out
