"""The job's phases over the store, each bounded: join, results, collectives, verdict.

A rank that never joins (by --wait), goes quiet (no heartbeat for --stall seconds: SIGSTOP, a hung host),
exits early, or dies without a word while the launcher stops the job (torchrun sends the others SIGTERM when
one rank dies) is named as lost, never waited on again. The lowest rank that is not lost prints the table.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpudash.preflight.store import Channel, Liveness

POLL_S = 0.2
# After SIGTERM: how long to wait for the other ranks' word before naming the silent ones. gpudash ends itself
# 5 s after an exit signal (lifetime.UNWIND_LIMIT_S), so the grace and the table must fit in that.
TERM_GRACE_S = 2.0

NEVER_JOINED, STOPPED, EXITED, DIED, TERMINATED = "never joined", "stopped answering", "exited", "died", "terminated"


# How the table names what a lost rank never sent (the store keys of Job.take_turn).
SAID = {"joined": "join", "turn-ready": "turn at the shared cores' matmul timing", "turn-done": "matmul timing"}


@dataclass
class Lost:
    rank: int
    state: str  # one of the five above
    detail: str
    hostname: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "state": self.state, "detail": self.detail, "hostname": self.hostname}


class Job:
    def __init__(
        self, channel: Channel, stall_s: float, wait_s: float, terminating: threading.Event | None = None
    ) -> None:
        self.channel = channel
        self.world = channel.world
        self.liveness = Liveness(channel, stall_s)
        self.join_deadline = time.monotonic() + wait_s
        self.wait_s, self.stall_s = wait_s, stall_s
        # Set by the SIGTERM handler (lifetime.graceful), which the caller may have installed before the store.
        self.terminating = terminating or threading.Event()
        self.lost: dict[int, Lost] = {}
        self.hosts: dict[int, str] = {}
        self.joined: dict[int, dict[str, Any]] = {}
        self._said_gone = False

    @property
    def me(self) -> int:
        return self.world.rank

    def everyone(self) -> list[int]:
        return list(range(self.world.world_size))

    def join(self, hostname: str, shares_cores: bool = False) -> None:
        """Say this rank is here; `shares_cores`: its device is the host's CPU, whose cores every CPU rank of the
        host shares (such ranks time their matmul rates one after another: take_turn)."""
        self.channel.start_heartbeat()
        self.channel.put(f"joined/{self.me}", {"hostname": hostname, "shares_cores": shares_cores})
        self.hosts[self.me] = hostname
        self.joined[self.me] = {"hostname": hostname, "shares_cores": shares_cores}

    def leave(self, why: str) -> None:
        """Tell the others this rank is going (an error, or the launcher's SIGTERM); best effort."""
        try:
            self.channel.put(f"gone/{self.me}", why)
        except Exception:
            pass

    def _host(self, r: int) -> str | None:
        if r not in self.hosts and self.channel.has([f"joined/{r}"]):
            self.joined[r] = self.channel.take(f"joined/{r}")
            self.hosts[r] = self.joined[r]["hostname"]
        return self.hosts.get(r)

    def _judge_missing(self, r: int, kind: str, term_since: float | None) -> Lost | None:
        """Why rank r will never post `kind`, or None while it may still."""
        kind = SAID.get(kind, kind)
        if self.channel.has([f"gone/{r}"]):
            why = str(self.channel.take(f"gone/{r}"))
            state = TERMINATED if why.startswith("terminated") else DIED if why.startswith("died: ") else EXITED
            return Lost(r, state, why.removeprefix("died: "), self._host(r))
        joined = self._host(r) is not None
        if not joined:
            if time.monotonic() > self.join_deadline:
                return Lost(r, NEVER_JOINED, f"did not join within --wait {self.wait_s:g} s")
            if term_since is None:
                return None
        else:
            quiet = self.liveness.silent([r]).get(r)
            if quiet is not None:
                return Lost(r, STOPPED, f"no heartbeat for {quiet:.0f} s (--stall {self.stall_s:g}) before its {kind}",
                            self._host(r))  # fmt: skip
        if term_since is not None and time.monotonic() - term_since > TERM_GRACE_S:
            where = "joined" if joined else "never joined"
            return Lost(r, DIED, f"{where}, sent no {kind} and no word while the launcher stopped the job "
                        "(SIGTERM): killed or crashed", self._host(r))  # fmt: skip
        return None

    def collect(self, kind: str, mine: Any) -> dict[int, Any]:
        """Post this rank's `kind` and gather every other rank's, naming each that cannot send one."""
        self.channel.put(f"{kind}/{self.me}", mine)
        got = self._gather(kind, [r for r in self.everyone() if r != self.me])
        return {self.me: mine, **got}

    def _gather(self, kind: str, ranks: list[int], read: bool = True) -> dict[int, Any]:
        """Wait until each of `ranks` has posted `kind/<rank>` (its value, or None unless `read`) or is judged
        lost (by --wait, --stall, its own word or the launcher's SIGTERM): every wait here is bounded."""
        got: dict[int, Any] = {}
        pending = [r for r in ranks if r not in self.lost]
        term_since: float | None = None
        while pending:
            if self.terminating.is_set() and term_since is None:
                term_since = time.monotonic()
                self._say_terminated()
            for r in list(pending):
                if self.channel.has([f"{kind}/{r}"]):
                    got[r] = self.channel.take(f"{kind}/{r}") if read else None
                    pending.remove(r)
                    continue
                lost = self._judge_missing(r, kind, term_since)
                if lost is not None:
                    self.lost[r] = lost
                    pending.remove(r)
            if pending:
                time.sleep(POLL_S)
        return got

    def take_turn(self, measure: Callable[[], Any]) -> Any:
        """Run `measure` (a timed measurement) while no other CPU rank of this host runs anything: the CPU ranks
        of one host share its cores, so they wait until all of them are here, then measure one after another
        in rank order, each waiting until the last is done before going on. A rank on its own device (a GPU)
        measures at once. Every wait is bounded as `_gather`'s: a rank that never joins, stops or dies is
        named as lost and the others go on without it. Every rank calls this once, whether or not it measures.
        """
        if not self.joined.get(self.me, {}).get("shares_cores"):
            return measure()
        others = [r for r in self.everyone() if r != self.me]
        self._gather("joined", others, read=False)  # who shares this host's cores: every rank's join (or loss)
        mine = self.hosts[self.me]
        group = sorted(
            r for r in self.everyone()
            if r == self.me or (r not in self.lost and self._host(r) == mine and self.joined[r].get("shares_cores"))
        )  # fmt: skip
        self.channel.put(f"turn-ready/{self.me}", True)
        self._gather("turn-ready", [r for r in group if r != self.me], read=False)
        value = None
        for r in group:
            if r == self.me:
                try:
                    value = None if self.terminating.is_set() else measure()
                finally:
                    self.channel.put(f"turn-done/{self.me}", True)
            else:
                self._gather("turn-done", [r], read=False)
        return value

    def _say_terminated(self) -> None:
        if not self._said_gone:
            self._said_gone = True
            self.leave("terminated: stopped by the launcher (SIGTERM)")

    def reporter(self) -> int:
        """The lowest rank that may still report: not lost, or only stopped by the launcher like the others."""
        able = [r for r in self.everyone() if r not in self.lost or self.lost[r].state == TERMINATED]
        return min(able) if able else self.me

    def publish(self, verdict: dict[str, Any]) -> None:
        """The reporter's verdict ({"code", "doc"}) for every rank; the reporter waits (bounded) until each has
        read it, since its exit may end the job (srun --kill-on-bad-exit=1, torchrun) before they have."""
        self.channel.put("verdict", verdict)
        readers = [r for r in self.everyone() if r != self.me and r not in self.lost]
        deadline = time.monotonic() + min(10.0, self.stall_s)
        while time.monotonic() < deadline and self.channel.count("read") < len(readers):
            time.sleep(POLL_S)

    def acknowledge(self) -> None:
        """Tell the reporter this rank is done with the verdict (it remembered its host's findings), so the
        reporter may exit: under `srun --kill-on-bad-exit=1` its exit ends the whole step at once."""
        try:
            self.channel.count("read", 1)
        except Exception:
            pass  # the store's host went already: nothing left to tell

    def await_verdict(self) -> dict[str, Any] | None:
        """The reporter's verdict ({"code", "doc"}); None when this rank has become the reporter (the one before
        went quiet)."""
        while True:
            if self.channel.has(["verdict"]):
                verdict = self.channel.take("verdict")
                return verdict if isinstance(verdict, dict) else {"code": int(verdict)}
            if self.terminating.is_set():
                self._say_terminated()
                return None if self.reporter() == self.me else {"code": 1}
            boss = self.reporter()
            if boss == self.me:
                return None
            lost = self._judge_missing(boss, "verdict", None)
            if lost is not None:
                self.lost[boss] = lost
                continue
            time.sleep(POLL_S)
