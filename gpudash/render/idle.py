"""The words for GPUs that are allocated but idle (gpudash.allocation.idle), shared by the faces."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpudash.allocation.idle import IdleRule, IdleStretch
from gpudash.render import monitor
from gpudash.render.processes import job_text
from gpudash.render.style import YELLOW

IDLE_MARK = "!"  # beside the GPU of each of its processes' rows; the note says what it means


def holders_text(stretch: IdleStretch) -> str:
    """Its jobs ("slurm 31337.0, k8s ml/trainer-0"), else its pids ("pid 4242, 4243")."""
    jobs = [job_text(job) for job in stretch.jobs]
    if jobs:
        return ", ".join(dict.fromkeys(jobs))
    return "pid " + ", ".join(str(p) for p in stretch.pids)


def idle_note(stretches: Sequence[IdleStretch], labels: Mapping[str, str], rule: IdleRule) -> str:
    """'! allocated but idle (≤1% busy for 10:00+): GPU 3 12:03 (slurm 31337.0); GPU 5 10:10 (pid 77)', or ''."""
    if not stretches:
        return ""
    pct = f"{rule.utilization_pct:g}"
    each = [f"GPU {labels.get(s.key, s.key)} {monitor.elapsed(s.seconds)} ({holders_text(s)})" for s in stretches]
    return f"{IDLE_MARK} allocated but idle (≤{pct}% busy for {monitor.elapsed(rule.after_s)}+): " + "; ".join(each)


def idle_lines(data: Mapping[str, Any], style: Callable[..., str] | None = None) -> list[str]:
    """`gpudash info --watch`'s lines for the info document's flagged GPUs ('idle: nvidia:3 allocated but idle
    12:05, ≤1% busy for 10:00+'); none for a single reading (allocated_idle null)."""
    found = data.get("allocated_idle")
    if not found:
        return []
    head = style("idle", YELLOW) if style else "idle"
    rule = f"≤{found['utilization_pct']:g}% busy for {monitor.elapsed(found['after_s'])}+"
    return [
        f"{head}: {d['key']} allocated but idle {monitor.elapsed(d['seconds'])}, {rule}"
        for d in found["devices"]
        if d["flagged"]
    ]
