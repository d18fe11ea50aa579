"""Per-precision benchmarks: matmul throughput over a sweep of shapes, and memory bandwidth.

`bench_machine` builds runner Tasks per device (`bench_jobs.device_tasks`, the one place that decides
what runs), runs them in a child process with a time limit and cancel (`gpudash.measure.runner`), and
assembles one `BenchReport` per device (`bench_assemble`). A replayed machine is never measured: its
report says "not run: replayed" and shows the spec peaks, labelled with their provenance (`bench_replay`).
Other code and the docs import the public names of those modules from here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from gpudash.measure.bench.assemble import assemble
from gpudash.measure.bench.jobs import Job, default_precisions, device_tasks
from gpudash.measure.bench.plan import Plan, plan_for
from gpudash.measure.bench.replay import replayed_report
from gpudash.measure.bench.report import BenchReport, bench_json
from gpudash.measure.bench.watchdog import Watchdog
from gpudash.measure.device_names import torch_device
from gpudash.measure.interruptible import run_interruptibly
from gpudash.measure.runner import TaskResult, run_tasks
from gpudash.models import DeviceInfo, now_iso
from gpudash.precisions import PRECISIONS

__all__ = [
    "BenchReport",
    "Job",
    "Plan",
    "assemble",
    "bench_json",
    "bench_machine",
    "default_precisions",
    "device_tasks",
    "plan_for",
]


def _select(machine, devices) -> list[DeviceInfo]:
    if devices is None:
        return list(machine.devices)
    wanted = [d if isinstance(d, str) else d.key for d in devices]
    by_key = {d.key: d for d in machine.devices}
    missing = [k for k in wanted if k not in by_key]
    if missing:
        raise KeyError(f"no such device: {', '.join(missing)}")
    return [by_key[k] for k in wanted]


OPERATIONS = {"matmul": "matmul", "memory": "bandwidth"}  # --operations names -> the jobs they run


def job_kinds(operations: Iterable[str] | None) -> set[str]:
    """The job kinds of the operations asked for (the calibration seed's --operations); ValueError naming an
    unknown one."""
    if operations is None:
        return set(OPERATIONS.values())
    names = list(operations)
    unknown = [o for o in names if o not in OPERATIONS]
    if unknown or not names:
        raise ValueError(f"unknown operation(s) {', '.join(unknown) or '(none)'}: expected {', '.join(OPERATIONS)}")
    return {OPERATIONS[o] for o in names}


def bench_machine(
    machine,
    devices=None,
    precisions: Iterable[str] | None = None,
    mode: str = "quick",
    case_budget_s: float = 2.0,
    timeout_s: float = 600.0,
    cancel: threading.Event | None = None,
    on_progress: Callable[[dict], None] | None = None,
    peak_overrides: dict | None = None,
    plan: Plan | None = None,
    operations: Iterable[str] | None = None,
) -> dict[str, BenchReport]:
    """Benchmark the machine's devices (all by default); returns device key -> BenchReport.

    precisions: names to run (default: every precision the architecture has, native or emulated).
    peak_overrides: precision -> knowledge.Peak to use instead of the tables (a calibration preset).
    plan: shapes and timing to use instead of the mode's (tests, experiments).
    operations: which of OPERATIONS to run ("matmul": the precision sweep, "memory": the bandwidth); default both.
    on_progress(event): {"device", "precision", "shape", "done", "total"} as cases finish.
    """
    chosen = _select(machine, devices)
    kinds = job_kinds(operations)
    wanted = list(precisions) if precisions is not None else None
    if wanted is not None:
        unknown = [p for p in wanted if p not in PRECISIONS]
        if unknown:
            raise ValueError(f"unknown precision(s): {', '.join(unknown)}")
    if machine.replayed:
        return {d.key: replayed_report(d, wanted, mode, peak_overrides) for d in chosen}

    started, measured_at = time.monotonic(), now_iso()
    per_device: dict[str, tuple[list[Job], list[str], dict[str, str]]] = {}
    for device in chosen:
        if wanted is None:
            run, not_run = default_precisions(device)
        else:
            run, not_run = list(wanted), {}
        if torch_device(device) is None:
            reason = "not run: torch cannot see this device (no torch build for it, or it is hidden)"
            per_device[device.key] = ([], [], {p: reason for p in run} | not_run)
            continue
        if "matmul" not in kinds:  # the sweep left out: no precision is measured, and says why
            not_run = {**not_run, **{p: "not run: --operations leaves out matmul" for p in run}}
            run = []
        jobs = device_tasks(device, run, plan or plan_for(device, mode), case_budget_s)
        per_device[device.key] = ([j for j in jobs if j.kind in kinds], run, not_run)
    jobs = [j for js, _, _ in per_device.values() for j in js]
    results = _run(jobs, cancel, timeout_s, on_progress)
    reports = {}
    for device in chosen:
        js, run, not_run = per_device[device.key]
        rs = [results[id(j)] for j in js]
        took = sum(r.duration_s for r in rs) if len(chosen) > 1 else time.monotonic() - started
        reports[device.key] = assemble(
            device, js, rs, run, not_run, mode, case_budget_s, peak_overrides, measured_at, took
        )
    return reports


def _run(jobs: list[Job], cancel, timeout_s: float, on_progress) -> dict[int, TaskResult]:
    if not jobs:
        return {}
    total = sum(j.units for j in jobs)
    finished = [0]

    def progress(index: int, info: dict) -> None:
        if on_progress is None:
            return
        job = jobs[index]
        done = min(int(info.get("done") or 0), job.units)
        on_progress(
            {
                "device": job.device,
                "kind": job.kind,
                "precision": job.precision or info.get("op"),
                "shape": info.get("shape"),
                "done": finished[0] + done,
                "total": total,
            }
        )

    def result(res: TaskResult) -> None:
        job = next(j for j in jobs if j.task is res.task)
        finished[0] += job.units
        if on_progress is not None:
            on_progress(
                {
                    "device": job.device,
                    "kind": job.kind,
                    "precision": job.precision,
                    "shape": None,
                    "done": finished[0],
                    "total": total,
                    "status": res.status,
                }
            )

    watchdog = Watchdog(cancel, timeout_s)
    try:
        out = run_interruptibly(
            lambda: run_tasks([j.task for j in jobs], cancel=watchdog.stop, on_progress=progress, on_result=result),
            watchdog.stop,
        )
    finally:
        watchdog.close()
    if watchdog.reason and watchdog.reason != "cancelled":
        for r in out:
            if r.status == "cancelled":
                r.status, r.error = "timeout", watchdog.reason
    return {id(j): r for j, r in zip(jobs, out)}
