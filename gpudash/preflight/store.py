"""The ranks' out-of-band channel: a TCPStore where each rank says it joined, beats a heartbeat, posts its result.

Why not the process group: a gloo collective waits on every peer, so one stopped (SIGSTOP) rank holds the
others until the group's timeout, once per collective. The store answers each request on its own, with its
own timeout, so the lowest rank still alive can see which rank went quiet and print the table naming it.

Where the store lives: under torchrun, in the launcher's agent (TORCHELASTIC_USE_AGENT_STORE=True), which
outlives any one rank; under srun, in a process rank 0 starts (preflight/tasks/store_host.py), which outlives
rank 0 too: a rank 0 that dies is named in the table of the lowest surviving rank, as any other rank is. Every
request is bounded by the store's timeout.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from gpudash.errors import GpudashError, UsageError
from gpudash.preflight.launcher import World

PREFIX = "gpudash/preflight/"
BEAT_S = 1.0  # how often a rank's heartbeat counter goes up
HOST_START_S = 60.0  # for the store's own process (srun) to import torch and listen
CONNECT_POLL_S = 0.2  # between tries to reach the store
WAIT_NOTE_S = 5.0  # a rank still waiting for the store after this long says so on stderr


class StoreLost(GpudashError):
    """The store stopped answering (its host died or stopped): this rank cannot reach the others (exit 3)."""


def quiet_torch_logs() -> None:
    """torch's C++ side logs every failed connection try with a C++ stack trace on stderr; preflight says what
    went wrong in one line instead. Must run before torch is imported; a value the user set stays."""
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")


def resolve(host: str, port: int) -> None:
    """A master address that does not resolve is bad input: one line naming it (exit 2), not torch's retries."""
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UsageError(
            f"MASTER_ADDR={host!r}: cannot resolve this address ({getattr(exc, 'strerror', None) or exc})"
        ) from None


def _agent_store() -> bool:
    return os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def owner() -> str:
    """Whose store the ranks meet at: the launcher's agent (torchrun), else rank 0's own process (srun)."""
    return "the launcher's store" if _agent_store() else "rank 0's store"


def stopped_while(world: World, what: str) -> GpudashError:
    """The launcher ended the job (SIGTERM) before this rank reached the store: it knows of no other rank, so it
    says which rank it is and what it was doing, in one line (exit 3: it could not reach the store)."""
    return GpudashError(f"rank {world.rank}: the launcher stopped this rank (SIGTERM) {what}; no device was checked")


def _why_not(exc: OSError) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused: nothing listens there"
    if isinstance(exc, TimeoutError):
        return "no answer"
    return exc.strerror or type(exc).__name__


def reach(world: World, connect_s: float, stop: threading.Event | None, say: Callable[[str], None] | None) -> float:
    """Wait until the store's address takes a connection, for up to `connect_s`; the seconds left of it. Tried
    from Python, a second at most at a time (torch's own connect blocks the signal handlers until its timeout,
    so a rank stopped while it waits for the store would end only at the launcher's SIGKILL): a SIGTERM that
    sets `stop` ends the wait at once, with a line that says what this rank knows."""
    assert world.master_addr and world.master_port
    began = time.monotonic()
    deadline, noted, why = began + connect_s, False, ""
    while True:
        now = time.monotonic()
        if stop is not None and stop.is_set():
            where = f"{owner()} at {world.master_addr}:{world.master_port}"
            if not why:
                raise stopped_while(world, f"before it tried to reach {where}")
            rank_0 = "; rank 0 may have ended before it started the store" if owner() == "rank 0's store" else ""
            raise stopped_while(world, f"while it waited for {where} for {now - began:.1f} s "
                                f"({why}{rank_0 if why.startswith('connection refused') else ''})")  # fmt: skip
        if now >= deadline:
            raise GpudashError(f"rank {world.rank}: cannot reach {owner()} at {world.master_addr}:{world.master_port} "
                               f"within --wait {connect_s:g} s ({why})")  # fmt: skip
        try:
            with socket.create_connection((world.master_addr, world.master_port), timeout=min(1.0, deadline - now)):
                return max(deadline - time.monotonic(), 1.0)
        except OSError as exc:
            why = _why_not(exc)
        if say is not None and not noted and time.monotonic() - began >= WAIT_NOTE_S:
            noted = True
            say(
                f"waiting for {owner()} at {world.master_addr}:{world.master_port} ({why}), up to --wait {connect_s:g} s"
            )
        time.sleep(min(CONNECT_POLL_S, max(deadline - time.monotonic(), 0.0)))


class Channel:
    """One rank's connection to the store (a second connection beats the heartbeat from its own thread)."""

    def __init__(
        self,
        world: World,
        timeout_s: float,
        connect_s: float,
        wait_s: float | None = None,
        stop: threading.Event | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        """`timeout_s`: each request's limit (--stall); `connect_s`: how long to try to reach the store;
        `wait_s`: --wait, how long the store's own process (srun) keeps waiting for a rank that has not joined;
        `stop`: set by the SIGTERM handler (the launcher ending the job), which the wait for the store heeds;
        `say`: a line on stderr for the user (a long wait for the store)."""
        wait_s = connect_s if wait_s is None else wait_s
        import torch.distributed as dist

        assert world.master_addr and world.master_port
        resolve(world.master_addr, world.master_port)
        self.world, self.timeout_s = world, timeout_s
        self.where = f"{world.master_addr}:{world.master_port}"
        self.hosting = world.rank == 0 and not _agent_store()
        self._dist = dist
        self.host_process: subprocess.Popen | None = None
        if stop is not None and stop.is_set():  # SIGTERM while torch loaded
            raise stopped_while(world, f"before it tried to reach {owner()} at {self.where}")
        if self.hosting:
            self.host_process = start_host(world, timeout_s, wait_s, stop)
        left = reach(world, connect_s, stop, say)
        try:
            self.raw = dist.TCPStore(
                world.master_addr,
                world.master_port,
                None,
                False,
                timeout=timedelta(seconds=left),
            )
            self.raw.set_timeout(timedelta(seconds=timeout_s))
        except Exception as exc:
            raise GpudashError(
                f"rank {world.rank}: cannot reach {owner()} at {self.where}: {first_line(exc)}"
            ) from None
        self.store = dist.PrefixStore(PREFIX, self.raw)
        self._stop = threading.Event()
        self._beater: threading.Thread | None = None

    def _call(self, what: str, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:
            raise StoreLost(
                f"rank {self.world.rank}: the store at {self.where} stopped answering ({what}: {first_line(exc)}); "
                "its host (rank 0 under srun, the launcher under torchrun) may have died"
            ) from None

    def put(self, key: str, value: Any) -> None:
        self._call(f"set {key}", self.store.set, key, pickle.dumps(value))

    def has(self, keys: list[str]) -> bool:
        return bool(self._call("check", self.store.check, keys))

    def take(self, key: str) -> Any:
        return pickle.loads(self._call(f"get {key}", self.store.get, key))

    def count(self, key: str, add: int = 0) -> int:
        return int(self._call(f"add {key}", self.store.add, key, add))

    def start_heartbeat(self) -> None:
        """A thread that raises hb/<rank> every BEAT_S over its own connection; it stops with the process (a
        SIGSTOP stops it too, which is how the others see a stopped rank)."""
        assert self.world.master_addr and self.world.master_port
        beat_store = self._dist.PrefixStore(
            PREFIX,
            self._dist.TCPStore(
                self.world.master_addr,
                self.world.master_port,
                None,
                False,
                timeout=timedelta(seconds=self.timeout_s),
            ),
        )
        key = f"hb/{self.world.rank}"

        def beat() -> None:
            while not self._stop.is_set():
                try:
                    beat_store.add(key, 1)
                except Exception:
                    return  # the store is gone: the main thread finds out on its next request
                self._stop.wait(BEAT_S)

        beat_store.add(key, 1)
        self._beater = threading.Thread(target=beat, name="preflight-heartbeat", daemon=True)
        self._beater.start()

    def close(self) -> None:
        """Stop the heartbeat and tell the store this rank needs it no more (its own process under srun ends
        once every rank has left or gone silent)."""
        self._stop.set()
        try:
            self.store.set(f"left/{self.world.rank}", "")
        except Exception:
            pass  # the store went already


HOST_COMMAND = (
    "import sys; del sys.path[0]; import runpy; "
    "runpy.run_module('gpudash.preflight.tasks.store_host', run_name='__main__', alter_sys=True)"
)


def start_host(world: World, stall_s: float, wait_s: float, stop: threading.Event | None = None) -> subprocess.Popen:
    """Start the store's own process (srun: no launcher keeps one) and wait until it listens. It runs in a
    session of its own, not among the children gpudash kills on its way out: it must outlive this rank. It
    holds none of srun's output pipes (srun waits for every writer to close them before the step ends). A
    SIGTERM that sets `stop` meanwhile ends the wait, and the process, at once."""
    import select

    args = {"port": world.master_port, "world_size": world.world_size, "stall_s": stall_s, "wait_s": wait_s,
            "prefix": PREFIX}  # fmt: skip
    where = f"{world.master_addr}:{world.master_port}"
    began = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", HOST_COMMAND, json.dumps(args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)  # fmt: skip
    assert proc.stdout is not None
    ready: list = []
    while not ready and time.monotonic() - began < HOST_START_S and not (stop is not None and stop.is_set()):
        ready, _, _ = select.select([proc.stdout], [], [], CONNECT_POLL_S)
    line = proc.stdout.readline().strip() if ready else ""
    proc.stdout.close()
    if line == "ready":
        return proc
    proc.kill()
    proc.wait()
    if stop is not None and stop.is_set():
        raise stopped_while(world, f"while it started the store at {where} ({time.monotonic() - began:.1f} s)")
    why = line.removeprefix("error: ") or f"its process did not start within {HOST_START_S:g} s"
    raise GpudashError(f"rank {world.rank}: cannot listen at {where}: {why}")


class Liveness:
    """Which ranks answer, as this rank sees it: a rank whose heartbeat has not moved for `stall_s` of this
    rank's own clock stopped answering (stopped, hung in the kernel, or dead without a word)."""

    def __init__(self, channel: Channel, stall_s: float) -> None:
        self.channel, self.stall_s = channel, stall_s
        self._seen: dict[int, tuple[int, float]] = {}

    def silent(self, ranks: list[int]) -> dict[int, float]:
        """rank -> seconds its heartbeat has not moved, for the ranks silent beyond stall_s."""
        now = time.monotonic()
        out = {}
        for r in ranks:
            beats = self.channel.count(f"hb/{r}")
            last = self._seen.get(r)
            if last is None or last[0] != beats:
                self._seen[r] = (beats, now)
            elif now - last[1] > self.stall_s:
                out[r] = now - last[1]
        return out
