"""The fleet's requests share one event loop on one background thread.

Synchronous code (the dashboard's worker thread, `gpudash fleet`) hands it a round as a coroutine and waits for
the concurrent.futures.Future it gets back; the round's requests, answers and results are all made on the loop's
thread, and a slow request left behind by a round keeps running there. One thread instead of a pool of 128:
every thread that allocates gets its own allocator cache and arena, and with 128 of them the process's memory
kept creeping up for hours (docs/performance.md, "Fleet view"). The connections its requests keep open
(gpudash.fleet.connections) belong to the loop and are closed with it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from gpudash.fleet.connections import Connections

T = TypeVar("T")
CLOSE_WAIT_S = 2.0  # how long close() lets cancelled requests end before it stops the loop
_loops_made = iter(range(1, 1 << 62))  # numbers each loop's lookup threads apart


class IoLoop:
    def __init__(self, name: str = "fleet-io") -> None:
        self._loop = asyncio.new_event_loop()
        # Name lookups (getaddrinfo) run on this pool. It is the loop's own, not asyncio's default, so close() can
        # let go of a lookup stuck in a slow resolver: on Python 3.11 shutdown_default_executor() joins its
        # threads on the loop's thread once cancelled, and one slow lookup froze close() past its deadline.
        self._lookup_prefix = f"{name}-lookup-{next(_loops_made)}"
        self._lookups = ThreadPoolExecutor(thread_name_prefix=self._lookup_prefix)
        self._loop.set_default_executor(self._lookups)
        self.connections = Connections()  # used only on the loop's thread
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def close(self) -> None:
        """Cancel what is still running, let it end, stop the loop and its thread."""
        if self._loop.is_closed():
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
            self.connections.close()

        if self._thread.is_alive():
            with contextlib.suppress(TimeoutError, concurrent.futures.TimeoutError):  # close() never raises
                self.submit(cancel_all()).result(timeout=2 * CLOSE_WAIT_S + 1)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=CLOSE_WAIT_S)
        if not self._thread.is_alive():
            self._loop.close()
        self._end_lookups()

    def _end_lookups(self) -> None:
        """Let the lookup threads end (at most CLOSE_WAIT_S); one stuck in a slow resolver ends on its own later."""
        self._lookups.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + CLOSE_WAIT_S
        for thread in threading.enumerate():
            if thread.name.startswith(self._lookup_prefix + "_"):
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
