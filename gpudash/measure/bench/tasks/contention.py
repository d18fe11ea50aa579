"""How much of the CPU other processes took while a case ran (a shared or virtual machine).

A CPU matmul uses every core; when another process (or the hypervisor: steal time) takes one, the
threads wait for each other and throughput can drop many times over. Measuring that share lets a
report say "these figures are low" instead of passing them off as the hardware's.
"""

from __future__ import annotations

import os
import time

import psutil

_IDLE = ("idle", "iowait", "guest", "guest_nice")  # guest time is already counted in user time


def _busy_seconds() -> float:
    times = psutil.cpu_times()
    return sum(v for k, v in times._asdict().items() if k not in _IDLE)


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system


class OtherLoad:
    """Start, run the case, then `share()`: other processes' CPU time / (wall time x CPUs), 0 to 1."""

    def __init__(self) -> None:
        self.cpus = psutil.cpu_count() or 1
        self._start = (time.monotonic(), _busy_seconds(), _own_seconds())

    def share(self) -> float:
        wall0, busy0, own0 = self._start
        wall = time.monotonic() - wall0
        if wall <= 0:
            return 0.0
        others = (_busy_seconds() - busy0) - (_own_seconds() - own0)
        return min(1.0, max(0.0, others / (wall * self.cpus)))
