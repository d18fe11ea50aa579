"""Signal a GPU process (SIGINT, SIGTERM, SIGKILL), as nvitop and nvtop let a user end a runaway job, and
read the GPU processes' ancestry for the process list's tree view.

Two steps, so a face can ask the user in between: `identify` reads who the pid is now (name, user, command,
start time) and whether this user may signal it; `signal_process` sends the signal only if the pid still
belongs to the process identified then: a pid freed and reused by another process in between has a
different start time (psutil's create_time), and gets nothing. Nothing is ever sent on a replayed machine
(its pids belong to the machine it was recorded on) or in a read-only session (`gpudash --readonly`).
Every refusal and failure is a one-line reason, never an exception.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import psutil

from gpudash.actions.session import Session

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
T = TypeVar("T")


@dataclass(frozen=True)
class ProcessTarget:
    """Who a pid is right now, and whether this user may signal it (`why_not` says why not)."""

    pid: int
    create_time: float | None = None  # psutil's start time: what makes the pid this process
    name: str | None = None
    user: str | None = None
    command: str | None = None
    why_not: str | None = None  # None: signalling is allowed

    @property
    def allowed(self) -> bool:
        return self.why_not is None


@dataclass(frozen=True)
class SignalOutcome:
    sent: bool
    message: str  # one line for the user, either way


def refusal(session: Session) -> str | None:
    """Why this session never signals anything, or None when it may."""
    if session.readonly:
        return "read-only: started with --readonly, so signals are off"
    host = replayed_host(session)
    if host is not None:
        return f"replayed: these pids belong to {host}, where the snapshot was recorded, not to this machine"
    return None


def replayed_host(session: Session) -> str | None:
    """The recorded machine's name when the session replays a snapshot (its pids are that machine's), else None."""
    machine = session.machine(include_torch=False)
    if machine.replayed:
        return machine.host.hostname or "the recorded machine"
    return None


def identify(session: Session, pid: int) -> ProcessTarget:
    """Who `pid` is now; `why_not` is set when it cannot or may not be signalled from here."""
    refused = refusal(session)
    if refused:
        return ProcessTarget(pid, why_not=refused)
    if pid <= 1 or pid == os.getpid():
        return ProcessTarget(pid, why_not=f"pid {pid} is {'gpudash itself' if pid > 1 else 'not a user process'}")
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            create_time = process.create_time()
            name = _quietly(process.name)
            user = _quietly(process.username)
            argv = _quietly(process.cmdline)
            uids = _quietly(process.uids)
    except psutil.NoSuchProcess:
        return ProcessTarget(pid, why_not=f"pid {pid} has exited")
    except psutil.AccessDenied:
        return ProcessTarget(pid, why_not=f"pid {pid}: access denied reading it, so it cannot be signalled from here")
    command = " ".join(argv) if argv else None
    why_not = None if uids is None or _may_signal(uids.real, uids.saved) else _not_yours(pid, user)
    return ProcessTarget(pid, create_time, name, user, command, why_not)


def signal_process(session: Session, pid: int, sig: int, *, create_time: float | None) -> SignalOutcome:
    """Send `sig` to `pid` if it is still the process that started at `create_time` (from `identify`)."""
    name = signal.Signals(sig).name
    refused = refusal(session)
    if refused:
        return SignalOutcome(False, f"{name} not sent: {refused}")
    if create_time is None:
        return SignalOutcome(False, f"{name} not sent: pid {pid} was never identified")
    try:
        process = psutil.Process(pid)
        started = process.create_time()
    except psutil.NoSuchProcess:
        return SignalOutcome(False, f"{name} not sent: pid {pid} has already exited")
    except psutil.AccessDenied:
        return SignalOutcome(False, f"{name} not sent: pid {pid}: access denied")
    if abs(started - create_time) > 0.01:  # psutil rounds boot time + ticks; a reused pid differs by far more
        return SignalOutcome(False, f"{name} not sent: pid {pid} now belongs to another process (started later)")
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return SignalOutcome(False, f"{name} not sent: pid {pid} has already exited")
    except PermissionError as exc:
        return SignalOutcome(False, f"{name} not sent to pid {pid}: not permitted ({exc.strerror or exc})")
    return SignalOutcome(True, f"{name} sent to pid {pid}")


def _may_signal(real_uid: int, saved_uid: int) -> bool:
    """kill(2): root, or a sender whose real or effective uid is the target's real or saved uid."""
    mine = {os.getuid(), os.geteuid()}
    return os.geteuid() == 0 or bool(mine & {real_uid, saved_uid})


def _not_yours(pid: int, user: str | None) -> str:
    return f"pid {pid} belongs to {user or 'another user'}: only its owner or root may signal it"


def _quietly(getter: Callable[[], T]) -> T | None:
    """One field; AccessDenied (another user's process under hidepid) costs that field only."""
    try:
        return getter()
    except psutil.AccessDenied:
        return None


Ancestor = tuple[int, str | None]  # (pid, name)


class ProcessAncestry:
    """Each pid's ancestors (the parent first, init left out), read once per process: a process's parents
    change only when one of them exits, and then the pid's next reading starts over. Refused on a replay,
    where the pids are the recorded machine's."""

    def __init__(self, session: Session) -> None:
        self.refused = refusal_for_reading(session)
        self._known: dict[int, tuple[float, list[Ancestor]]] = {}

    def of(self, pids: list[int]) -> dict[int, list[Ancestor]]:
        """{pid: ancestors} for the pids this machine can see; the others are left out."""
        if self.refused:
            return {}
        out: dict[int, list[Ancestor]] = {}
        for pid in set(pids):
            known = self._known.get(pid)
            try:
                process = psutil.Process(pid)
                started = process.create_time()
                if known is None or known[0] != started or not all(psutil.pid_exists(p) for p, _ in known[1]):
                    chain = [(p.pid, _name(p)) for p in process.parents() if p.pid > 1]
                    known = (started, chain)
                    self._known[pid] = known
            except (psutil.Error, ValueError):
                self._known.pop(pid, None)
                continue
            out[pid] = known[1]
        for pid in [p for p in self._known if p not in out]:
            del self._known[pid]
        return out


def refusal_for_reading(session: Session) -> str | None:
    """Why this machine's /proc says nothing about the session's pids (a replay), or None."""
    host = replayed_host(session)
    if host is not None:
        return f"replayed: the process tree of {host} was not recorded"
    return None


def _name(process: psutil.Process) -> str | None:
    try:
        return process.name()
    except psutil.Error:
        return None
