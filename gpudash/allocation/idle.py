"""Allocated but idle: a GPU that compute processes hold while its utilization stays near 0 for a while.

Judged over readings, never over one: `gpudash info` takes one reading and flags nothing; the dashboard judges
the readings it takes every [ui] refresh_interval, `gpudash serve` the one it takes at each scrape. A reading
where the GPU is held (a process that is not graphics-only: a display server does not allocate a GPU) and
its utilization is at most [idle] utilization_pct starts or continues a stretch; any other reading (busy, no
process, utilization or processes n/a, MIG where NVML gives no whole-GPU utilization) ends it. The GPU is
flagged once the stretch is [idle] after_s long. Readings further apart than after_s cannot vouch for the
time between them, so such a gap starts the stretch again.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from gpudash.models import GRAPHICS, JobAttribution, ProcessUsage, Sample


class IdleRule(NamedTuple):
    after_s: float = 600.0
    utilization_pct: float = 1.0

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> IdleRule:
        idle, default = config.get("idle") or {}, cls()
        return cls(
            float(idle.get("after_s", default.after_s)), float(idle.get("utilization_pct", default.utilization_pct))
        )


class IdleStretch(NamedTuple):
    """One GPU's current run of held-and-idle readings."""

    key: str
    since: float  # time of the stretch's first reading (seconds since the epoch)
    seconds: float  # from its first reading to its last
    flagged: bool  # seconds >= the rule's after_s
    pids: tuple[int, ...]  # the holding processes of the last reading
    jobs: tuple[JobAttribution, ...]  # their Slurm jobs or pods, each once


def holders(sample: Sample) -> list[ProcessUsage]:
    """The processes that hold the GPU: any but graphics-only ones (Xorg, a desktop shell)."""
    return [p for p in sample.processes or [] if p.type != GRAPHICS]


def judged(sample: Sample | None) -> bool:
    """Whether the reading can say held-and-idle or not: its process list and its utilization were read."""
    return sample is not None and sample.processes is not None and sample.utilization_pct is not None


def held_and_idle(sample: Sample | None, rule: IdleRule) -> bool:
    if sample is None or sample.processes is None or sample.utilization_pct is None:
        return False
    return bool(holders(sample)) and sample.utilization_pct <= rule.utilization_pct


class IdleWatch:
    """Each GPU's held-and-idle stretch over the readings recorded so far."""

    def __init__(self, rule: IdleRule) -> None:
        self.rule = rule
        self._since: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._stretch: dict[str, IdleStretch] = {}
        self._judged: set[str] = set()  # GPUs whose last reading could be judged

    def record(self, samples: Mapping[str, Sample], now: float | None = None) -> None:
        """One reading per device (keyed by DeviceInfo.key); `now` defaults to each sample's own time."""
        for key, sample in samples.items():
            at = now if now is not None else (sample.timestamp or time.time())
            self._record(key, sample, at)

    def _record(self, key: str, sample: Sample, at: float) -> None:
        (self._judged.add if judged(sample) else self._judged.discard)(key)
        if not held_and_idle(sample, self.rule):
            for held in (self._since, self._last, self._stretch):
                held.pop(key, None)
            return
        last = self._last.get(key)
        if key not in self._since or last is None or at - last > self.rule.after_s:
            self._since[key] = at  # a new stretch, or one the readings cannot vouch for across a long gap
        self._last[key] = at
        since = self._since[key]
        procs = holders(sample)
        jobs: list[JobAttribution] = []
        for proc in procs:
            if proc.job is not None and proc.job not in jobs:
                jobs.append(proc.job)
        seconds = max(0.0, at - since)
        self._stretch[key] = IdleStretch(
            key, since, seconds, seconds >= self.rule.after_s, tuple(sorted({p.pid for p in procs})), tuple(jobs)
        )

    def stretch(self, key: str) -> IdleStretch | None:
        """The GPU's current held-and-idle stretch (any length), or None."""
        return self._stretch.get(key)

    def judged(self, key: str) -> bool:
        """Whether the GPU's last reading could be judged at all (see `judged`)."""
        return key in self._judged

    def to_json(self, keys: Sequence[str]) -> dict[str, Any]:
        """The info document's `allocated_idle`: the rule, and each of `keys` in a held-and-idle stretch now."""
        stretches = [s for s in (self.stretch(k) for k in keys) if s is not None]
        return {
            "after_s": self.rule.after_s,
            "utilization_pct": self.rule.utilization_pct,
            "devices": [{"key": s.key, "seconds": round(s.seconds, 1), "flagged": s.flagged} for s in stretches],
        }

    def flagged(self) -> list[IdleStretch]:
        """The GPUs held and idle for at least the rule's after_s (callers put them in device order)."""
        return [s for s in self._stretch.values() if s.flagged]
