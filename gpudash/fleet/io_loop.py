"""The fleet's requests share one event loop on one background thread.

Synchronous code (a scraper round in the dashboard's worker thread or in `gpudash fleet`) hands it coroutines
and gets concurrent.futures.Future objects back, so it can wait with a deadline and leave a slow request
running. One thread instead of a pool of 128 keeps the process's memory flat: every thread that allocates
gets its own allocator cache and arena, which grow on their own (docs/performance.md, "Fleet view").
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
CLOSE_WAIT_S = 2.0  # how long close() lets cancelled requests end before it stops the loop


class IoLoop:
    def __init__(self, name: str = "fleet-io") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def call(self, function: Any, *args: Any) -> Future[Any]:
        """Run a plain function on the loop's thread (where the requests' state lives) and return its future."""

        async def call() -> Any:
            return function(*args)

        return self.submit(call())

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

        if self._thread.is_alive():
            self.submit(cancel_all()).result(timeout=CLOSE_WAIT_S + 1)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=CLOSE_WAIT_S)
        if not self._thread.is_alive():
            self._loop.close()
