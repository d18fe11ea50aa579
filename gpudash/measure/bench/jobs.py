"""What runs on one device: one matmul sweep of every precision (timed in alternation), then memory bandwidth,
as runner Tasks.

`device_tasks` is the one place that decides what a benchmark runs; the task code itself lives in
`bench_tasks` and runs in the child process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpudash.knowledge import ABSENT, arch_for
from gpudash.measure.bench.plan import Plan
from gpudash.measure.device_names import torch_device
from gpudash.measure.runner import Task
from gpudash.models import DeviceInfo
from gpudash.precisions import PRECISIONS

MATMUL_TASK = "gpudash.measure.bench.tasks.matmul:interleaved"
BANDWIDTH_TASK = "gpudash.measure.bench.tasks.bandwidth:run"


@dataclass
class Job:
    """One runner Task and what it measures, so results can be put back on the right device."""

    device: str  # device key
    kind: str  # "matmul" | "bandwidth" (more kinds may be appended, e.g. plugin benchmarks)
    precision: str | None  # what progress lines call it: "fp32,bf16" for the matmul sweep
    task: Task
    units: int  # progress units (cases) this task reports
    precisions: tuple[str, ...] = ()  # the matmul sweep's precisions, in the order they alternate


def default_precisions(device: DeviceInfo) -> tuple[list[str], dict[str, str]]:
    """Precisions worth running here (native or emulated) and, for the rest, why not."""
    arch = arch_for(device)
    run, skipped = [], {}
    for p in PRECISIONS:
        if arch.precisions.get(p, ABSENT) == ABSENT:
            skipped[p] = f"not run: {p} is absent on {arch.family} (architecture tables); ask for it to try anyway"
        else:
            run.append(p)
    return run, skipped


def device_tasks(device: DeviceInfo, precisions: Iterable[str], plan: Plan, case_budget_s: float) -> list[Job]:
    """The benchmark tasks for one device: one matmul sweep over every precision, then memory bandwidth."""
    where = torch_device(device)
    arch = arch_for(device)
    dtypes = {"fp8_e4m3": arch.fp8_dtype, "fp8_e5m2": arch.fp8_e5m2_dtype}
    shapes = [list(s) for s in plan.shapes]
    per_case = 2 * case_budget_s + plan.measure_s + 1.0  # a case may run to twice its budget (clocks.measure)
    chosen = list(precisions)
    jobs = []
    if chosen:
        kwargs = {
            "device": where,
            "precisions": chosen,
            "shapes": shapes,
            "measure_s": plan.measure_s,
            "case_budget_s": case_budget_s,
            "dtypes": dtypes,
            "sweep_budget_s": plan.sweep_budget_s,
        }
        # A contended case may time up to RETRY_FACTOR measuring times more (clocks.measure_rounds).
        per_case += 2.0 * plan.measure_s
        cases = len(shapes) * len(chosen)
        task = Task(
            MATMUL_TASK,
            kwargs,
            timeout_s=30.0 + per_case * cases,
            name=f"{device.key} matmul {','.join(chosen)}",
            progress=True,
        )
        jobs.append(Job(device.key, "matmul", ",".join(chosen), task, cases, tuple(chosen)))
    copy_bytes = plan.copy_bytes
    if device.memory_total_bytes:
        copy_bytes = min(copy_bytes, device.memory_total_bytes // 16)  # two buffers, room to spare
    kwargs = {"device": where, "nbytes": int(copy_bytes), "measure_s": plan.measure_s, "case_budget_s": case_budget_s}
    jobs.append(
        Job(
            device.key,
            "bandwidth",
            None,
            Task(BANDWIDTH_TASK, kwargs, timeout_s=30.0 + 2 * per_case, name=f"{device.key} bandwidth", progress=True),
            2,
        )
    )
    return jobs
