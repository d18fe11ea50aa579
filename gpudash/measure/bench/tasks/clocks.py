"""Timing one benchmark case: warm-up, repetitions within a time budget, median and spread.

Two clocks: `time.perf_counter` around each call on the CPU (a CPU matmul returns when it is done),
and CUDA events on GPUs (kernels are asynchronous; events time them on the device). The GPU clock
also overwrites a buffer larger than the L2 cache before each call, outside the events, so a call
does not find its inputs already cached by the previous one (mamf-finder does the same).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpudash.measure.bench.tasks.contention import OtherLoad

MIN_REPS = 3
MAX_REPS = 10_000


class CpuClock:
    max_batch = 1
    shares_host = True  # other processes on the machine slow it down (see contention.py)

    def run(self, call: Callable[[], object], n: int) -> list[float]:
        times = []
        for _ in range(n):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return times


class CudaClock:
    max_batch = 32  # events are read after one synchronize per batch
    shares_host = False

    def __init__(self, torch, device: str) -> None:
        self.torch = torch
        self.device = torch.device(device)
        index = self.device.index if self.device.index is not None else torch.cuda.current_device()
        l2 = getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 0) or 0
        flush_bytes = max(2 * l2, 64 * 1024 * 1024)
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=self.device)

    def run(self, call: Callable[[], object], n: int) -> list[float]:
        cuda = self.torch.cuda
        starts = [cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            self.flush.zero_()
            start.record()
            call()
            end.record()
        cuda.synchronize(self.device)
        return [start.elapsed_time(end) / 1000.0 for start, end in zip(starts, ends)]


def clock_for(torch, device: str):
    return CpuClock() if device == "cpu" else CudaClock(torch, device)


@dataclass
class Timing:
    times: list[float]  # seconds per timed call, warm-up excluded
    warmup_reps: int
    first_call_s: float  # the first warm-up call (includes one-off set-up such as kernel selection)
    budget_cut: bool  # the case budget stopped the repetitions before the measuring time was used
    other_load: float | None = None  # CPU share other processes took while timing (CPU clock only)

    def summary(self) -> dict:
        ordered = sorted(self.times)
        return {
            "median_s": statistics.median(ordered),
            "mean_s": statistics.fmean(ordered),
            "min_s": ordered[0],
            "p10_s": _quantile(ordered, 0.10),
            "p90_s": _quantile(ordered, 0.90),
            "reps": len(ordered),
            "warmup_reps": self.warmup_reps,
            "budget_cut": self.budget_cut,
            "other_load": self.other_load,
        }


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default method)."""
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


class OverBudget(Exception):
    """A single call took longer than the whole case budget: a slow path."""

    def __init__(self, call_s: float) -> None:
        super().__init__(f"one call took {call_s:.3g} s")
        self.call_s = call_s


def measure(
    call: Callable[[], object], clock, *, measure_s: float, case_budget_s: float, min_reps: int = MIN_REPS
) -> Timing:
    """Warm up for about a quarter of `measure_s`, then time calls for `measure_s` (at least `min_reps`),
    never starting a call that would take the case past `case_budget_s`. At least one call is timed,
    so a case whose first call nearly fills the budget can take up to twice the budget."""
    began = time.perf_counter()
    first = clock.run(call, 1)[0]
    if first > case_budget_s:
        raise OverBudget(first)
    warm = [first]
    # Warm up for a quarter of the measuring time. The first call pays for kernel selection and cold
    # caches, so a second one follows unless the first alone filled the warm-up time (a long call's
    # one-off costs are small beside it) or would eat into the half of the budget kept for timing.
    warmup_s = measure_s / 4
    while len(warm) < 50:
        elapsed = time.perf_counter() - began
        if elapsed >= warmup_s and (len(warm) >= 2 or first >= warmup_s):
            break
        if elapsed + warm[-1] > case_budget_s / 2:
            break
        warm += clock.run(call, 1)
    estimate = min(warm[1:]) if len(warm) > 1 else first
    times: list[float] = []
    budget_cut = False
    load = OtherLoad() if clock.shares_host else None
    timed_from = time.perf_counter()
    while len(times) < MAX_REPS:
        now = time.perf_counter()
        if len(times) >= min_reps and now - timed_from >= measure_s:
            break
        if times and now - began + estimate > case_budget_s:
            budget_cut = len(times) < min_reps or now - timed_from < measure_s
            break
        remaining = max(measure_s - (now - timed_from), estimate)
        batch = max(1, min(clock.max_batch, int(remaining / max(estimate, 1e-9))))
        times += clock.run(call, batch)
    return Timing(times, len(warm), first, budget_cut, load.share() if load else None)
