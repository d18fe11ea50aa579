"""The memory all answers in flight may hold together: one budget shared by a scraper's requests.

Each request reads its answer against the budget, a chunk at a time, and keeps what it took until its answer is
parsed (or given up); one that would go over fails with its own reason, so an endpoint serving a 30 MiB page
or an endless chunked body costs its own host an error, never the process its memory. Before this, each
oversized answer in flight held about 33 MB, so 128 at once held about 4.2 GB (issue 27). Everything but
`Hold.release` runs on the fleet's event-loop thread; a release from the parser thread is a plain integer
update under a lock.
"""

from __future__ import annotations

import threading

MIB = 2**20
OVER = "answer over the fleet's memory budget"


class MemoryBudget:
    def __init__(self, limit_bytes: int) -> None:
        self.limit = limit_bytes
        self.held = 0
        self.peak = 0  # the most held at once (the benchmark and the tests read it)
        self.refused = 0  # answers refused for want of budget
        self._lock = threading.Lock()

    def hold(self) -> Hold:
        return Hold(self)

    def _take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.limit:
                self.refused += 1
                return False
            self.held += n
            self.peak = max(self.peak, self.held)
            return True

    def _give(self, n: int) -> None:
        with self._lock:
            self.held -= n

    @property
    def reason(self) -> str:
        return f"{OVER} ({self.limit // MIB} MiB for all answers in flight; fleet.memory_budget_mib)"


class Hold:
    """What one request holds of the budget; released once, when its answer is parsed or given up."""

    def __init__(self, budget: MemoryBudget) -> None:
        self.budget = budget
        self.bytes = 0

    def take(self, n: int) -> bool:
        if not self.budget._take(n):
            return False
        self.bytes += n
        return True

    def release(self) -> None:
        held, self.bytes = self.bytes, 0
        if held:
            self.budget._give(held)
