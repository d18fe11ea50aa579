"""Scrape a list of endpoints directly: rounds with a deadline, at most `concurrency` requests at once.

A round sends one GET per endpoint that is not still busy with an earlier one, waits until all have answered
or the deadline passed, and reports what it has. An endpoint that missed the deadline is dropped from the
round (its request finishes in the background and its answer is used next time), so one slow host never
holds the view. gpudash endpoints are asked only for the series the fleet shows (`name[]` filter), and
gpudash's batch results (verified precisions, recommendation, checks) only once a minute.

Each answer is read against the fleet's memory budget (gpudash.fleet.budget) and parsed off the event loop, in
one parser thread, by the request's deadline, so the round's deadline fires whatever an endpoint sends. What a
target may say is bounded, and a target never adds devices to a host another target owns
(gpudash.fleet.claims); each device lists the targets that described it.

Status per host: up (answered this round), stale (not this round, but data younger than `stale_after_s`,
shown with the error), unreachable (nothing recent; the error says why); an answering host is then judged
(gpudash.fleet.verdict): degraded (a lost GPU, fewer GPUs than its hostfile line or --expect-gpus says) or
empty (no device series at all).
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from gpudash.fleet import exposition
from gpudash.fleet.budget import MIB, Hold, MemoryBudget
from gpudash.fleet.claims import Claims, owners
from gpudash.fleet.fetch import FetchError, fetch_bytes
from gpudash.fleet.gc_pause import after_round, collector_paused
from gpudash.fleet.io_loop import IoLoop
from gpudash.fleet.model import STALE, UNREACHABLE, UP, FleetRound, Host
from gpudash.fleet.series import BATCH, GPUDASH_LIVE, HEALTH, WANTED
from gpudash.fleet.targets import Target
from gpudash.fleet.verdict import judge
from gpudash.plain_text import one_line

BATCH_EVERY_S = 60.0
REQUEST_ROUNDS = 2  # a request (its answer read and parsed) may last this many rounds' deadlines
MEMORY_BUDGET_BYTES = 256 * MIB  # config fleet.memory_budget_mib
MAX_HOSTS_PER_TARGET = 64  # config fleet.max_hosts_per_target
MAX_DEVICES_PER_TARGET = 1024  # config fleet.max_devices_per_target
LIVE_WANTED = WANTED - frozenset(BATCH)


def _filtered(url: str, batch: bool) -> str:
    """The URL with prometheus_client's `name[]` filter for the gpudash series wanted (other exporters
    ignore the parameter and are filtered line by line after the fetch)."""
    names = GPUDASH_LIVE + HEALTH + ("gpudash_job_gpu_memory_bytes",) + (BATCH if batch else ("gpudash_machine_info",))
    query = urllib.parse.urlencode([("name[]", n) for n in names])
    return f"{url}{'&' if '?' in url else '?'}{query}"


@dataclass
class _Endpoint:
    target: Target
    busy: asyncio.Future | None = None  # the request in flight (a task on the fleet's event loop)
    live: list = field(default_factory=list)  # samples of the last good answer
    batch: list = field(default_factory=list)
    batch_at: float | None = None
    ok_at: float | None = None
    error: str | None = None
    hosts: tuple[str, ...] = ()  # host names its last data carried
    note: str | None = None  # what its last answer named beyond its bounds (Claims.note)


class Scraper:
    def __init__(
        self,
        targets: list[Target],
        *,
        concurrency: int = 128,
        timeout_s: float = 4.0,
        stale_after_s: float = 15.0,
        ca_file: str | None = None,
        memory_budget_bytes: int = MEMORY_BUDGET_BYTES,
        max_hosts_per_target: int = MAX_HOSTS_PER_TARGET,
        max_devices_per_target: int = MAX_DEVICES_PER_TARGET,
        expect_gpus: int | None = None,
    ) -> None:
        self.expect_gpus = expect_gpus  # GPUs a host should have where its hostfile line does not say
        self.timeout_s, self.stale_after_s, self.ca_file = timeout_s, stale_after_s, ca_file
        self.max_hosts, self.max_devices = max_hosts_per_target, max_devices_per_target
        self.budget = MemoryBudget(memory_budget_bytes)
        self._endpoints = [_Endpoint(t) for t in targets]
        # Requests, answers and rounds all run on one event-loop thread (gpudash.fleet.io_loop says why), so
        # the endpoints' state is only ever touched there and needs no lock.
        self._io = IoLoop()
        self._rounds = 0
        self._in_flight = asyncio.Semaphore(max(1, concurrency))
        # Parsing runs here, never on the loop: one thread (the SeriesCache is its own), answers one at a time.
        self._parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleet-parse")
        self._series = exposition.SeriesCache()

    def close(self) -> None:
        self._io.close()
        self._parser.shutdown(wait=True, cancel_futures=True)  # a parse in progress stops at its deadline

    @property
    def connections_opened(self) -> int:
        """Connections opened so far; with exporters that keep them open, one per endpoint."""
        return self._io.connections.opened

    async def _fetch(self, endpoint: _Endpoint, batch: bool) -> tuple[list, str | None]:
        url = _filtered(endpoint.target.url, batch)
        limit_s = REQUEST_ROUNDS * self.timeout_s
        deadline = time.monotonic() + limit_s
        hold = self.budget.hold()
        try:
            async with self._in_flight:
                # A request may outlive its round (dropped from the round, not cancelled) but not a second one.
                body = await fetch_bytes(
                    url,
                    limit_s,
                    self.ca_file,
                    accept="text/plain;version=0.0.4",
                    connections=self._io.connections,
                    hold=hold,
                )
            claims = Claims(endpoint.target.host, self.max_hosts, self.max_devices)
            parse = partial(self._parse, body, hold, WANTED if batch else LIVE_WANTED, claims, deadline, limit_s)
            del body  # the parser thread holds it now, and lets it go as soon as it is decoded
            samples = await asyncio.get_running_loop().run_in_executor(self._parser, parse)
        finally:
            hold.release()
        return samples, claims.note(endpoint.target.label)

    def _parse(
        self, body: bytes, hold: Hold, wanted: frozenset[str], claims: Claims, deadline: float, limit_s: float
    ) -> list:
        """In the parser thread: decode and parse one answer, the text counted against the budget too."""
        if time.monotonic() > deadline:
            raise FetchError(f"no time left to read the answer within {limit_s:g} s")
        if not hold.take(len(body) if body.isascii() else 4 * len(body)):  # a str holds up to 4 bytes a char
            raise FetchError(self.budget.reason)
        text = body.decode("utf-8", errors="replace")
        del body
        try:
            return exposition.parse(text, wanted, self._series, claims.admit, deadline)
        except exposition.TooLate as exc:
            error = FetchError(f"the answer could not be read within {limit_s:g} s ({exc})")
        except ValueError as exc:
            error = FetchError(f"not a Prometheus metrics page ({exc})")
        # Raised out here, with the text let go: an exception raised inside `except` would keep the parse's
        # frames, and the text with them, for as long as the request's task is kept.
        del text
        raise error

    def _landed(self, endpoint: _Endpoint, batch: bool, future: asyncio.Future) -> None:
        now = time.time()
        if endpoint.busy is not future:
            return  # already taken in by the round that waited for it
        endpoint.busy = None
        if future.cancelled():  # the scraper closed while this request was waiting or running
            endpoint.error = "not asked: the fleet source was closed"
            return
        exc = future.exception()
        if exc is not None:
            exc.__traceback__ = None  # its frames may hold what the request read (see fetch._ask)
            error = str(exc) if isinstance(exc, FetchError) else f"{type(exc).__name__}: {exc}"
            endpoint.error = one_line(error, 500)  # an HTTP reason phrase is the other host's text
            return
        samples, endpoint.note = future.result()
        endpoint.live = [s for s in samples if s[0].name not in BATCH or s[0].name == "gpudash_machine_info"]
        if batch:
            endpoint.batch, endpoint.batch_at = [s for s in samples if s[0].name in BATCH], now
        endpoint.ok_at, endpoint.error = now, None

    def round(self) -> FleetRound:
        """One round, run on the fleet's event loop; the caller's thread only waits for it."""
        with collector_paused():  # the pages' samples are garbage once it ends (gpudash.fleet.gc_pause)
            fleet = self._io.submit(self._round()).result()
        self._rounds += 1
        after_round(self._rounds)  # from the second, its hosts' series are known: full collections stop walking them
        return fleet

    async def _round(self) -> FleetRound:
        started, t0 = time.time(), time.monotonic()
        sent: list[tuple[_Endpoint, bool, asyncio.Future]] = []
        for endpoint in self._endpoints:
            if endpoint.busy is not None:
                continue  # still answering an earlier round: not asked twice
            batch = endpoint.batch_at is None or started - endpoint.batch_at >= BATCH_EVERY_S
            task = asyncio.create_task(self._fetch(endpoint, batch))
            endpoint.busy = task
            task.add_done_callback(partial(self._landed, endpoint, batch))
            sent.append((endpoint, batch, task))
        if sent:
            await asyncio.wait([task for _, _, task in sent], timeout=self.timeout_s)
        # wait() returns as soon as the answers are in, before their done-callbacks have run: take in every
        # answer that arrived, so none is counted as dropped.
        for endpoint, batch, answer in sent:
            if answer.done():
                self._landed(endpoint, batch, answer)
        dropped = [e.target.label for e in self._endpoints if e.busy is not None]
        hosts, notes = self._hosts(time.time(), set(dropped))
        return FleetRound(
            {"kind": "hosts", "targets": len(self._endpoints)},
            hosts,
            started,
            time.monotonic() - t0,
            self.timeout_s,
            dropped,
            notes,
        )

    def _status(self, endpoint: _Endpoint, now: float, dropped: bool) -> tuple[str, str | None]:
        error: str | None
        if dropped:
            error = f"no answer within {self.timeout_s:g} s (dropped from this round)"
            if endpoint.error:  # why its last request failed: a slow host may always be asked again, never seen
                error += f"; before: {endpoint.error}"
        else:
            error = endpoint.error
        if error is None and endpoint.ok_at is not None:
            return UP, None
        if endpoint.ok_at is not None and now - endpoint.ok_at <= self.stale_after_s:
            return STALE, error
        return UNREACHABLE, error or "no answer yet"

    def _hosts(self, now: float, dropped: set[str]) -> tuple[list[Host], list[str]]:
        """The round's rows, and notes on targets that named more than their bounds or another's hostname."""
        seen = []  # per endpoint: status, error, its samples by hostname, the hostnames it claims
        for endpoint in self._endpoints:
            target = endpoint.target
            status, error = self._status(endpoint, now, target.label in dropped)
            data = endpoint.live + endpoint.batch if status != UNREACHABLE else []
            groups = exposition.group_by_host(data, target.host) if data else {}
            if groups:
                endpoint.hosts = tuple(groups)
            seen.append((endpoint, status, error, groups, list(groups) or list(endpoint.hosts) or [target.label]))
        rows, notes = owners((e.target.label, e.target.host, names) for e, _, _, _, names in seen)
        notes = [e.note for e in self._endpoints if e.note] + notes
        hosts: dict[str, Host] = {}
        samples: dict[str, list] = {}
        origin: dict[int, str] = {}  # id(sample) -> the target that said it
        statuses: dict[str, list[str]] = {}
        expected: dict[str, int] = {}  # a hostfile's GPU column, by row: the largest its targets name
        for endpoint, status, error, groups, names in seen:
            target = endpoint.target
            for claimed in names:
                name = rows[(target.label, claimed)]
                if target.expect_gpus is not None:
                    expected[name] = max(expected.get(name, 0), target.expect_gpus)
                host = hosts.setdefault(name, Host(name, UP))
                host.targets.append(target.url)
                statuses.setdefault(name, []).append(status)
                if error:
                    host.error = f"{host.error}; " if host.error else ""
                    host.error += f"{target.label}: {error}"
                if endpoint.ok_at is not None and status != UNREACHABLE:
                    host.last_seen = max(host.last_seen or 0.0, endpoint.ok_at)
                group = groups.get(claimed, [])
                samples.setdefault(name, []).extend(group)
                origin.update((id(sample), target.url) for sample in group)
        for name, host in hosts.items():
            said = statuses[name]
            host.status = (
                UP if all(s == UP for s in said) else UNREACHABLE if all(s == UNREACHABLE for s in said) else STALE
            )
            exposition.read_host(host, samples[name], origin)
            judge(host, expected.get(name, self.expect_gpus))
        return sorted(hosts.values(), key=lambda h: h.name), notes
