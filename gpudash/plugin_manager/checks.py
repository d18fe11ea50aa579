"""run_checks: every registered check on every device, each in the child-process runner."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpudash.plugin_manager.child_runs import (
    broken_result,
    plugin_device,
    plugin_task,
    run_in_children,
    time_limit,
    why_not_run,
)
from gpudash.plugin_manager.collect import collect_checks
from gpudash.plugin_manager.factory import make_plugin_manager
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import Registered
from gpudash.plugin_manager.reporting import ErrorReporter, report_to_stderr
from gpudash.plugins_api import SKIP, CheckResult, Device

if TYPE_CHECKING:
    from gpudash.measure.runner import Task, TaskResult

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
        if task_result.ok:
            result = CheckResult.from_dict(task_result.value)
        else:
            status, summary = broken_result(task_result.status, task_result.error, "check")
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
