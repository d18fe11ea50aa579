"""Best-of timing that survives a busy machine: two operations timed in alternation.

A probe's rate is only compared with fp32's, so both are timed in the same loop, one call each in
turn: a neighbour that loads the CPU (or a GPU clock that drops) slows both alike, and the ratio holds.
On the CPU the timing runs on one thread: with every core shared, a thread pool's barrier waits for a
descheduled worker and single calls take 100x their time, which no number of rounds averages out. With one
thread, a call that was descheduled shows it exactly (its thread's CPU time falls short of its wall time), so
such rounds are dropped and the rate stands for the hardware even on a busy machine; where too few rounds ran
undisturbed, the thread's CPU time (which the neighbours' time does not enter) times the calls instead.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch


def synchronize(device: str) -> None:
    """Wait for queued kernels; a no-op on the CPU, where calls return when done."""
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _timed(fn: Callable[[], object], device: str) -> float:
    synchronize(device)
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


@contextmanager
def steady_threads(device: str) -> Iterator[None]:
    """One CPU thread while timing the CPU; GPUs are left alone."""
    if device.startswith("cuda"):
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


@dataclass
class Pair:
    """Two operations timed in alternation: the best and median seconds of each, and what they were timed by."""

    first_s: float
    second_s: float
    first_median_s: float
    second_median_s: float
    rounds: int
    undisturbed: int | None  # rounds in which neither call was descheduled (None: not watched, on a GPU)
    basis: str  # "wall time", "wall time of undisturbed rounds", or "thread CPU time" (see `paired`)

    def ratio_range(self) -> tuple[float, float]:
        """second/first time ratio (the first's rate over the second's), from the slow end to the fast end."""
        return self.second_s / self.first_median_s, self.second_median_s / self.first_s


UNDISTURBED = 0.9  # a call whose thread ran for at least 90 % of its wall time was not descheduled
MIN_UNDISTURBED = 3


def _timed_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of one call; one thread, so the CPU time is exactly the work
    the call did, without the time the thread waited for its core."""
    start, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - start, time.thread_time() - cpu


def paired(
    first: Callable[[], object], second: Callable[[], object], device: str, budget_s: float = 0.15, max_rounds: int = 15
) -> Pair:
    """Time `first` and `second` in alternation after one warm-up call of each. Rounds stop when the budget is
    spent (after at least one). On the CPU a round counts when neither call was descheduled (its thread's CPU time
    reaches UNDISTURBED of its wall time); a busy machine gets up to 4x the budget and rounds to find
    MIN_UNDISTURBED such rounds, and where it never does, the calls are timed by their thread's CPU time, which
    the neighbours' time does not enter."""
    cpu = not device.startswith("cuda")
    with steady_threads(device):
        _timed(first, device)
        _timed(second, device)
        rows: list[tuple[float, float, float, float]] = []  # wall and CPU seconds of first, then of second
        kept = 0
        began = time.perf_counter()
        while True:
            spent, rounds = time.perf_counter() - began, len(rows)
            quiet = not cpu or kept >= MIN_UNDISTURBED
            if rounds and ((spent >= budget_s or rounds >= max_rounds) and quiet):
                break
            if rounds and (spent >= 4 * budget_s or rounds >= 4 * max_rounds):
                break
            if cpu:
                row = (*_timed_cpu(first), *_timed_cpu(second))
                kept += row[1] >= UNDISTURBED * row[0] and row[3] >= UNDISTURBED * row[2]
            else:
                a, b = _timed(first, device), _timed(second, device)
                row = (a, a, b, b)
            rows.append(row)
    if not cpu:
        pairs, basis = [(r[0], r[2]) for r in rows], "wall time"
    elif kept >= MIN_UNDISTURBED:
        pairs = [(r[0], r[2]) for r in rows if r[1] >= UNDISTURBED * r[0] and r[3] >= UNDISTURBED * r[2]]
        basis = "wall time of undisturbed rounds"
    else:
        pairs, basis = [(r[1], r[3]) for r in rows], "thread CPU time"
    firsts, seconds = sorted(a for a, _ in pairs), sorted(b for _, b in pairs)
    return Pair(
        firsts[0],
        seconds[0],
        statistics.median(firsts),
        statistics.median(seconds),
        len(rows),
        kept if cpu else None,
        basis,
    )


def best_of_pair(
    first: Callable[[], object], second: Callable[[], object], device: str, budget_s: float = 0.15, max_rounds: int = 15
) -> tuple[float, float, int]:
    """(best seconds of first, best seconds of second, rounds): see `paired`."""
    pair = paired(first, second, device, budget_s, max_rounds)
    return pair.first_s, pair.second_s, pair.rounds
