"""What running checks and benchmarks in the child-process runner (gpudash.measure.runner) has in common.

Each registered check or benchmark runs on each device as one runner task calling gpudash.plugin_host, which
re-creates the plugin manager from the same sources; so a run that raises, hangs or kills its process
becomes a result with its error, and the next one starts in a fresh child.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.records import Registered
from gpudash.plugins_api import ERROR, NOT_RUN_REPLAYED, SKIP, Device

if TYPE_CHECKING:  # the runner itself is imported only when something runs
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
    """The runner task that calls gpudash.plugin_host.<function> for `reg` on `device`."""
    from gpudash.measure.runner import Task

    return Task(
        f"gpudash.plugin_host:{function}",
        {"sources": pm.sources(), "plugin": reg.plugin, "device": device.to_dict(), **kwargs},
        timeout_s=timeout_s,
        name=f"{reg.plugin}/{reg.name} on {device.key}",
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


def child_env() -> dict[str, str]:
    """The child sees this process's sys.path, so it finds the same plugins (e.g. a target dir a test added)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def broken_result(status: str, error: str | None, kind: str) -> tuple[str, str]:
    """The runner's verdict on a task that did not return (error, timeout, crash), as a status and summary."""
    if status == "cancelled":
        return SKIP, "cancelled"
    if status == "error":  # the runner gives "Type: message"
        kind_of, _, message = (error or "").partition(": ")
        return ERROR, f"the {kind} raised {kind_of}: {message}" if message else f"the {kind} raised {error}"
    what = {"timeout": "did not finish", "crashed": "killed its process"}.get(status, status)
    return ERROR, f"the {kind} {what}: {error}"
