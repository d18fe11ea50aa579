"""Resource limits of a child process: address space (RLIMIT_AS) and CPU time (RLIMIT_CPU).

The parent gives a task its limits (`Task.limits`); tasks with the same limits share a child, which sets them on
itself before the first task runs (`apply`) and renews the CPU allowance before each task (`before_task`):
RLIMIT_CPU counts the process's CPU seconds since it started, so each task gets `cpu_s` more than what was
used before it. The soft CPU limit sends SIGXCPU (which ends the process unless caught); the hard limit,
`cpu_s` per task plus a grace, sends SIGKILL to one that caught it. The parent names the limit a task reached
(`reached`) from how it ended: a MemoryError (or an allocator's "Cannot allocate memory") under an address-
space limit, SIGXCPU, or SIGKILL once the task's CPU time is past its allowance (it caught SIGXCPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

try:
    import resource
except ImportError:  # Windows: no rlimits; tasks run without them
    resource = None  # type: ignore[assignment]

MIB = 2**20
CPU_GRACE_S = 2  # between SIGXCPU (soft) and SIGKILL (hard): time to end cleanly, or to be killed
SIGXCPU, SIGKILL = 24, 9  # Linux numbers, as the exit code of a killed child gives them (negated)
MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "can't allocate memory", "std::bad_alloc")


@dataclass(frozen=True)
class ChildLimits:
    address_space_mib: int = 0  # 0: none
    cpu_s: int = 0  # CPU seconds per task, 0: none

    def __bool__(self) -> bool:
        return bool(self.address_space_mib or self.cpu_s)

    def to_json(self) -> dict[str, int]:
        return {"address_space_mib": self.address_space_mib, "cpu_s": self.cpu_s}

    @classmethod
    def from_json(cls, data: object) -> ChildLimits | None:
        if not isinstance(data, dict):
            return None
        return cls(int(data.get("address_space_mib") or 0), int(data.get("cpu_s") or 0))

    @property
    def memory_text(self) -> str:
        return f"memory limit ({self.address_space_mib} MiB)"

    @property
    def cpu_text(self) -> str:
        return f"CPU time limit ({self.cpu_s} s)"


def cpu_used_s() -> float | None:
    """This process's CPU seconds so far (the child reports it as each task starts)."""
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _lower(kind: int, soft: int, hard: int) -> None:
    """Set a limit no higher than the hard limit this process already has (raising it needs privileges)."""
    assert resource is not None
    infinity = resource.RLIM_INFINITY
    _, old_hard = resource.getrlimit(kind)
    if old_hard != infinity:
        hard = old_hard if hard == infinity else min(hard, old_hard)
    if hard != infinity:
        soft = hard if soft == infinity else min(soft, hard)
    resource.setrlimit(kind, (soft, hard))


def apply(limits: ChildLimits, tasks: int) -> None:
    """In the child, before any task: the address-space limit, and the CPU hard limit for all `tasks`."""
    if resource is None or not limits:
        return
    # SIGXCPU dumps core by default: a core file of a plugin's process must not land in the user's folder.
    _lower(resource.RLIMIT_CORE, 0, resource.getrlimit(resource.RLIMIT_CORE)[1])
    if limits.address_space_mib:
        size = limits.address_space_mib * MIB
        _lower(resource.RLIMIT_AS, size, size)
    if limits.cpu_s:
        hard = math.ceil(cpu_used_s() or 0.0) + limits.cpu_s * max(1, tasks) + CPU_GRACE_S
        _lower(resource.RLIMIT_CPU, resource.RLIM_INFINITY, hard)


def before_task(limits: ChildLimits) -> None:
    """In the child, as a task starts: it may use `cpu_s` CPU seconds from now (soft limit, SIGXCPU)."""
    if resource is None or not limits.cpu_s:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(cpu_used_s() or 0.0) + limits.cpu_s
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def reached(
    limits: ChildLimits | None, error: str | None = None, exit_code: int | None = None, cpu_s: float | None = None
) -> str | None:
    """Which limit a task that failed reached ("memory limit (8192 MiB)"), or None when it reached none (as far as
    its end tells): `error` is what it raised ("Type: message"), `exit_code` how its child ended (Popen's:
    -signal), `cpu_s` the CPU seconds the task used (its child's in all, less what it had used when the task started)."""
    if not limits:
        return None
    if limits.address_space_mib and error and any(word in error for word in MEMORY_WORDS):
        return limits.memory_text
    if limits.cpu_s and exit_code == -SIGXCPU:
        return limits.cpu_text
    if limits.cpu_s and exit_code == -SIGKILL and cpu_s is not None and cpu_s >= limits.cpu_s:
        return limits.cpu_text  # it caught SIGXCPU and ran on to the hard limit
    return None


def current() -> dict[str, list[int]]:
    """This process's address-space and CPU limits, [soft, hard] (-1: none); a task that reports them shows what
    its child runs under."""
    if resource is None:
        return {}
    return {
        name: [-1 if v == resource.RLIM_INFINITY else v for v in resource.getrlimit(kind)]
        for name, kind in (("address_space", resource.RLIMIT_AS), ("cpu", resource.RLIMIT_CPU))
    }
