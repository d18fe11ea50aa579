"""One GPU process in full, for the process screen: command, working directory, user, start time, threads,
CPU and host memory, environment (secrets redacted), and its place in the process tree.

`ProcessInspector` keeps the psutil handle between readings, so CPU% is measured over the time between two
reads (the first read has none, and says so). Every field psutil cannot read (another user's process, a
process that exited) is None with its reason in `unavailable`, never an exception. On a replayed machine
nothing is read here: its pids belong to the machine the snapshot was recorded on, and this machine's
process of the same pid is someone else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import psutil

from gpudash.actions.processes import replayed_host
from gpudash.actions.session import Session
from gpudash.models import ProcessUsage
from gpudash.redaction import redact_environment

T = TypeVar("T")
MAX_CHILDREN = 64  # the tree lists at most this many descendants; the rest are counted
CPU_FIRST_READING = "needs a second reading"
GONE = "the process has exited"


@dataclass(frozen=True)
class TreeNode:
    pid: int
    name: str | None
    depth: int  # 0 for the process itself; ancestors and descendants relative to it


@dataclass
class ProcessDetails:
    pid: int
    exists: bool = True
    name: str | None = None
    command: str | None = None  # the whole command line, never clipped
    cwd: str | None = None
    user: str | None = None
    started: float | None = None  # epoch seconds
    threads: int | None = None
    cpu_pct: float | None = None  # of one core, like top
    host_memory_bytes: int | None = None  # resident set size
    environment: dict[str, str] | None = None  # secret-looking values redacted
    ancestors: list[TreeNode] = field(default_factory=list)  # the parent first, up to init
    descendants: list[TreeNode] = field(default_factory=list)  # depth-first, at most MAX_CHILDREN
    more_descendants: int = 0  # beyond MAX_CHILDREN
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> why it is None


def replay_refusal(session: Session) -> str | None:
    """Why this machine's /proc says nothing about the session's pids, or None when it does."""
    host = replayed_host(session)
    if host is not None:
        return f"replayed: pid details belong to {host}, where the snapshot was recorded"
    return None


class ProcessInspector:
    """Reads one pid again and again (the process screen reads it every refresh)."""

    def __init__(self, session: Session, pid: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.pid = pid
        self.refused = replay_refusal(session)
        self._clock = clock
        self._process: psutil.Process | None = None
        self._cpu: tuple[float, float] | None = None  # (cpu seconds, clock) at the last read

    def read(self, recorded: ProcessUsage | None = None) -> ProcessDetails:
        """The process now. On a replay, what the snapshot recorded of it (`recorded`, the listing's row), and
        every other field n/a with the reason."""
        details = ProcessDetails(self.pid)
        if self.refused:
            return _from_recording(details, recorded, self.refused)
        try:
            process = self._handle()
            with process.oneshot():
                details.started = process.create_time()
                details.name = _field(process.name, "name", details)
                argv = _field(process.cmdline, "command", details)
                details.user = _field(process.username, "user", details)
                details.threads = _field(process.num_threads, "threads", details)
                memory = _field(process.memory_info, "host_memory_bytes", details)
                times = _field(process.cpu_times, "cpu_pct", details)
            details.cwd = _field(process.cwd, "cwd", details)
            environ = _field(process.environ, "environment", details)
        except psutil.NoSuchProcess:
            self._process = None
            details.exists = False
            details.unavailable["all"] = GONE
            return details
        details.command = " ".join(argv) if argv else None
        if argv is not None and not argv:
            details.unavailable["command"] = "empty command line"
        details.host_memory_bytes = memory.rss if memory is not None else None
        details.environment = redact_environment(environ) if environ is not None else None
        if times is not None:
            self._cpu_pct(details, times.user + times.system)
        self._tree(process, details)
        return details

    def _handle(self) -> psutil.Process:
        if self._process is None or not self._process.is_running():  # False: the pid now names a new process
            if self._process is not None:
                raise psutil.NoSuchProcess(self.pid)
            self._process = psutil.Process(self.pid)
        return self._process

    def _cpu_pct(self, details: ProcessDetails, cpu_seconds: float) -> None:
        now = self._clock()
        if self._cpu is not None and now > self._cpu[1]:
            details.cpu_pct = round(max(0.0, cpu_seconds - self._cpu[0]) / (now - self._cpu[1]) * 100, 1)
        else:
            details.unavailable["cpu_pct"] = CPU_FIRST_READING
        self._cpu = (cpu_seconds, now)

    @staticmethod
    def _tree(process: psutil.Process, details: ProcessDetails) -> None:
        try:
            parents = process.parents()  # the parent first, init last
        except psutil.Error as exc:
            details.unavailable["ancestors"] = type(exc).__name__
            parents = []
        details.ancestors = [TreeNode(p.pid, _quietly(p.name), -(i + 1)) for i, p in enumerate(parents)]
        try:
            found = _descendants(process, 1)
        except psutil.Error as exc:
            details.unavailable["descendants"] = type(exc).__name__
            found = []
        details.descendants = found[:MAX_CHILDREN]
        details.more_descendants = max(0, len(found) - MAX_CHILDREN)


def _from_recording(details: ProcessDetails, recorded: ProcessUsage | None, why: str) -> ProcessDetails:
    details.exists = False
    if recorded is not None:
        details.name, details.user, details.command = recorded.name, recorded.user, recorded.command
        details.cpu_pct, details.host_memory_bytes = recorded.cpu_pct, recorded.host_memory_bytes
        if recorded.elapsed_s is not None and recorded.elapsed_s >= 0:
            details.unavailable["started"] = f"running {recorded.elapsed_s:.0f} s when recorded"
    for name in ("name", "user", "command", "cpu_pct", "host_memory_bytes", "started", "threads", "cwd"):
        if getattr(details, name) is None:
            details.unavailable.setdefault(name, why)
    for name in ("environment", "ancestors", "descendants"):
        details.unavailable[name] = why
    return details


def _descendants(process: psutil.Process, depth: int) -> list[TreeNode]:
    """Depth-first, children in pid order; a child that exits meanwhile is left out."""
    out: list[TreeNode] = []
    for child in sorted(process.children(), key=lambda p: p.pid):
        out.append(TreeNode(child.pid, _quietly(child.name), depth))
        try:
            out.extend(_descendants(child, depth + 1))
        except psutil.NoSuchProcess:
            continue
        if len(out) > MAX_CHILDREN * 4:  # enough to say "and N more" without walking a fork bomb
            break
    return out


def _field(getter: Callable[[], T], name: str, details: ProcessDetails) -> T | None:
    """One psutil field; AccessDenied (another user's process) or a zombie costs that field only."""
    try:
        return getter()
    except psutil.AccessDenied:
        details.unavailable[name] = "AccessDenied (another user's process)"
    except psutil.ZombieProcess:
        details.unavailable[name] = "zombie process"
    return None


def _quietly(getter: Callable[[], T]) -> T | None:
    try:
        return getter()
    except psutil.Error:
        return None
