"""Running a measurement so that Ctrl-C stops it cleanly.

The runner's child process lives in its own session, so the terminal's SIGINT never reaches it. The
work therefore waits in a thread of its own, and the main thread, where KeyboardInterrupt arrives, sets
the stop event the runner watches: the runner kills the child before the interrupt goes on up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_interruptibly(work: Callable[[], T], stop: threading.Event) -> T:
    """work() in a worker thread; on Ctrl-C, set `stop`, give the work 10 s to wind down, re-raise."""
    outcome: dict = {}
    finished = threading.Event()

    def worker() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=worker, daemon=True).start()
    try:
        # An Event, not Thread.join: a join cut short by KeyboardInterrupt can return at once the next time.
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:
        stop.set()
        finished.wait(10)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
