"""What the host knows about a GPU process: user, command line, CPU%, resident memory, age, and its Slurm
job or Kubernetes pod (gpudash.devices.job_attribution, read once per process).

The drivers give a pid and GPU figures only; psutil reads the rest. A pid psutil cannot see (the process
exited, or it is a host pid seen from inside a container, where NVML still reports host pids) keeps its
driver fields, and its host fields say why they are n/a.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from gpudash.devices import job_attribution
from gpudash.models import PROCESS_NOT_VISIBLE, JobAttribution, ProcessUsage

HOST_FIELDS = ("user", "command", "cpu_pct", "host_memory_bytes", "elapsed_s")
CPU_FIRST_READING = "needs a second reading"
# Linux shows an empty /proc/<pid>/cmdline for kernel threads, zombies, and briefly right after exec.
EMPTY_COMMAND = "empty command line"

# A process on two GPUs is looked up twice per round: closer readings than this reuse the last CPU%
# instead of dividing by a few microseconds.
_MIN_CPU_INTERVAL_S = 0.2
_FORGET_AFTER_S = 60.0  # pids not asked about for this long are dropped, so the cache stays small


@dataclass
class _Seen:
    process: psutil.Process
    name: str | None
    user: str | None
    command: str | None
    started: float
    static_missing: dict[str, str]
    cpu_time: float | None
    cpu_at: float
    cpu_pct: float | None
    asked_at: float
    job: JobAttribution | None = None


class HostProcesses:
    """Fills the host side of ProcessUsage records; remembers each pid between readings for its CPU%."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, proc: Path = job_attribution.PROC) -> None:
        self._clock = clock
        self._proc = proc  # /proc; tests give a folder of fake cgroup and environ files
        self._seen: dict[int, _Seen] = {}

    def fill(self, proc: ProcessUsage) -> None:
        now = self._clock()
        self._forget(now)
        seen = self._lookup(proc.pid, now)
        if seen is None:
            for name in HOST_FIELDS:
                proc.unavailable.setdefault(name, PROCESS_NOT_VISIBLE)
            return
        seen.asked_at = now
        if seen.static_missing.get("command") == EMPTY_COMMAND:  # read too early after exec: try again
            self._read_command(seen)
        proc.name = proc.name or seen.name
        proc.user, proc.command = seen.user, seen.command
        proc.job = seen.job
        for name, why in seen.static_missing.items():
            proc.unavailable.setdefault(name, why)
        proc.elapsed_s = round(max(0.0, time.time() - seen.started), 1)
        try:
            with seen.process.oneshot():
                proc.host_memory_bytes = seen.process.memory_info().rss
                times = seen.process.cpu_times()
        except psutil.NoSuchProcess:  # exited between the driver's list and now
            self._seen.pop(proc.pid, None)
            for name in ("cpu_pct", "host_memory_bytes"):
                proc.unavailable.setdefault(name, PROCESS_NOT_VISIBLE)
            return
        except psutil.AccessDenied:
            for name in ("cpu_pct", "host_memory_bytes"):
                proc.unavailable.setdefault(name, "AccessDenied")
            return
        self._update_cpu(seen, times.user + times.system, now)
        proc.cpu_pct = seen.cpu_pct
        if seen.cpu_pct is None:
            proc.unavailable.setdefault("cpu_pct", CPU_FIRST_READING)

    def _lookup(self, pid: int, now: float) -> _Seen | None:
        seen = self._seen.get(pid)
        if seen is not None:
            try:
                if seen.process.is_running():  # False when the pid now belongs to a new process
                    return seen
            except psutil.Error:
                pass
            del self._seen[pid]
        try:
            process = psutil.Process(pid)
            with process.oneshot():
                started = process.create_time()
                missing: dict[str, str] = {}
                name = _optional(process.name, "name", missing)
                user = _optional(process.username, "user", missing)
                argv = _optional(process.cmdline, "command", missing)
        except (psutil.NoSuchProcess, ValueError):  # ValueError: a negative or absurd pid from a driver
            return None
        except psutil.AccessDenied:
            return None
        command = " ".join(argv) if argv else None
        if argv is not None and not argv:
            missing["command"] = EMPTY_COMMAND
        seen = _Seen(process, name, user, command, started, missing, None, now, None, now)
        seen.job, unread = job_attribution.read(pid, self._proc)  # a job's cgroup and variables stay for its life
        if seen.job is None and unread:  # the cgroup said nothing and the variables could not be read
            seen.static_missing["job"] = unread
        self._seen[pid] = seen
        return seen

    @staticmethod
    def _read_command(seen: _Seen) -> None:
        try:
            argv = seen.process.cmdline()
            name = seen.process.name()  # before exec finished this was the parent's name too
        except psutil.Error:
            return
        if argv:
            seen.command, seen.name = " ".join(argv), name
            seen.static_missing.pop("command", None)

    @staticmethod
    def _update_cpu(seen: _Seen, cpu_time: float, now: float) -> None:
        if seen.cpu_time is None:
            seen.cpu_time, seen.cpu_at = cpu_time, now
            return
        elapsed = now - seen.cpu_at
        if elapsed < _MIN_CPU_INTERVAL_S:
            return
        seen.cpu_pct = round(max(0.0, cpu_time - seen.cpu_time) / elapsed * 100, 1)
        seen.cpu_time, seen.cpu_at = cpu_time, now

    def _forget(self, now: float) -> None:
        stale = [pid for pid, seen in self._seen.items() if now - seen.asked_at > _FORGET_AFTER_S]
        for pid in stale:
            del self._seen[pid]

    def __len__(self) -> int:
        return len(self._seen)


def _optional(getter: Callable[[], object], field: str, missing: dict[str, str]):
    """One psutil field; AccessDenied (another user's process under hidepid, say) costs that field only."""
    try:
        return getter()
    except psutil.AccessDenied:
        missing[field] = "AccessDenied"
        return None
