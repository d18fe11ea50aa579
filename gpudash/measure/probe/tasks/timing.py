"""Best-of timing that survives a busy machine: two operations timed in alternation.

A probe's rate is only compared with fp32's, so both are timed in the same loop, one call each in
turn: a neighbour that loads the CPU (or a GPU clock that drops) slows both alike, and the ratio holds.
On the CPU the timing runs on one thread: with every core shared, a thread pool's barrier waits for a
descheduled worker and single calls take 100x their time, which no number of rounds averages out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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


def best_of_pair(
    first: Callable[[], object], second: Callable[[], object], device: str, budget_s: float = 0.15, max_rounds: int = 15
) -> tuple[float, float, int]:
    """(best seconds of first, best seconds of second, rounds). One warm-up call of each is not counted;
    rounds stop when the budget is spent, after at least one."""
    with steady_threads(device):
        _timed(first, device)
        _timed(second, device)
        best_a = best_b = float("inf")
        rounds = 0
        deadline = time.perf_counter() + budget_s
        while rounds < max_rounds and (rounds == 0 or time.perf_counter() < deadline):
            best_a = min(best_a, _timed(first, device))
            best_b = min(best_b, _timed(second, device))
            rounds += 1
    return best_a, best_b, rounds
