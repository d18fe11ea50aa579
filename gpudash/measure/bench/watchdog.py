"""The overall time limit of a benchmark run and the caller's cancel, as one stop event for the runner."""

from __future__ import annotations

import threading
import time


class Watchdog:
    """Sets `stop` when the caller cancels or the overall time limit passes, and remembers which."""

    def __init__(self, cancel: threading.Event | None, timeout_s: float) -> None:
        self.stop = threading.Event()
        self.reason: str | None = None
        self._done = threading.Event()
        self._cancel, self._deadline, self._timeout = cancel, time.monotonic() + timeout_s, timeout_s
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            if self._cancel is not None and self._cancel.is_set():
                self.reason = "cancelled"
            elif time.monotonic() > self._deadline:
                self.reason = f"bench time limit of {self._timeout:g} s reached"
            else:
                continue
            self.stop.set()
            return

    def close(self) -> None:
        self._done.set()
