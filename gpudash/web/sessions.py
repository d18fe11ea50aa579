"""Browser sessions: at most `limit` at once, and every session's process gone once its tab is.

textual-serve starts one app process per websocket and, when the websocket closes, asks the app to quit
and waits for it. An app that never reads that request (still starting, or stuck) would be waited for
forever, and a process the app itself started would outlive it; so after the browser leaves, a session
gives its process `quit_grace_s` to exit, then ends it and anything it started. A slot is freed only
when its processes are gone, so the limit bounds processes, not just open tabs.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field

import psutil
from aiohttp import WSCloseCode, web

log = logging.getLogger("gpudash.web")

SLOT_WAIT_S = 2.0  # a reloaded tab asks for its new session while the old one is still closing
QUIT_GRACE_S = 3.0  # a Textual app quits in well under a second once asked
KILL_WAIT_S = 2.0


@dataclass(eq=False)
class Session:
    number: int
    websocket: web.WebSocketResponse | None = None
    process: asyncio.subprocess.Process | None = None
    started: list[psutil.Process] = field(default_factory=list)  # what the app process had started
    ended: asyncio.Task | None = None


class Sessions:
    def __init__(self, limit: int, *, slot_wait_s: float = SLOT_WAIT_S, quit_grace_s: float = QUIT_GRACE_S) -> None:
        self.limit = limit
        self.slot_wait_s = slot_wait_s
        self.quit_grace_s = quit_grace_s
        self._live: set[Session] = set()
        self._changed = asyncio.Condition()
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self._live)

    async def wait_for_free_slot(self) -> bool:
        async with self._changed:
            return await self._wait_for_free_slot()

    async def open(self) -> Session | None:
        """A new session, or None if every slot stayed taken for `slot_wait_s`."""
        async with self._changed:
            if not await self._wait_for_free_slot():
                return None
            session = Session(next(self._numbers))
            self._live.add(session)
        log.info("session %d opened (%d of %d)", session.number, len(self._live), self.limit)
        return session

    async def _wait_for_free_slot(self) -> bool:
        try:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self._live) < self.limit), self.slot_wait_s)
        except asyncio.TimeoutError:
            return False
        return True

    def attach(self, session: Session, websocket: web.WebSocketResponse, process: asyncio.subprocess.Process | None):
        session.websocket, session.process = websocket, process

    def browser_left(self, session: Session) -> None:
        """Start making sure the session's processes end (once; safe to call again)."""
        if session.ended is None:
            if session.process is not None and session.process.returncode is None:
                session.started = _descendants(session.process.pid)
            session.ended = asyncio.ensure_future(self._end_processes(session))

    async def close(self, session: Session) -> None:
        """Wait until the session's processes are gone, then free its slot."""
        self.browser_left(session)
        assert session.ended is not None
        try:
            await asyncio.shield(session.ended)
        finally:
            async with self._changed:
                self._live.discard(session)
                self._changed.notify_all()
            log.info("session %d closed (%d of %d open)", session.number, len(self._live), self.limit)

    async def shutdown(self) -> None:
        """The server is stopping: close every browser's websocket and end every session's processes."""
        live = list(self._live)
        closing = [
            s.websocket.close(code=WSCloseCode.GOING_AWAY, message=b"gpudash web is stopping")
            for s in live
            if s.websocket is not None and not s.websocket.closed
        ]
        await asyncio.gather(*closing, return_exceptions=True)
        for session in live:
            self.browser_left(session)
        ended = [s.ended for s in live if s.ended is not None]
        if ended:
            await asyncio.wait(ended, timeout=self.quit_grace_s + 2 * KILL_WAIT_S)
        for session in live:  # last resort if the event loop is being torn down around us
            _kill([*_alive(session.process), *session.started])

    async def _end_processes(self, session: Session) -> None:
        process = session.process
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), self.quit_grace_s)
            except asyncio.TimeoutError:
                log.warning(
                    "session %d: the app did not quit within %.0f s; ending it", session.number, self.quit_grace_s
                )
                session.started = _descendants(process.pid) or session.started
                await asyncio.to_thread(_terminate, [*_alive(process), *session.started])
                await process.wait()
        leftovers = [p for p in session.started if p.is_running()]
        if leftovers:
            await asyncio.to_thread(_terminate, leftovers)


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _alive(process: asyncio.subprocess.Process | None) -> list[psutil.Process]:
    if process is None or process.returncode is not None:
        return []
    try:
        return [psutil.Process(process.pid)]
    except psutil.Error:
        return []


def _terminate(processes: list[psutil.Process]) -> None:
    """SIGTERM, then SIGKILL whatever is still there after KILL_WAIT_S."""
    for p in processes:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(processes, timeout=KILL_WAIT_S)
    _kill(alive)


def _kill(processes: list[psutil.Process]) -> None:
    for p in processes:
        try:
            p.kill()
        except psutil.Error:
            pass
