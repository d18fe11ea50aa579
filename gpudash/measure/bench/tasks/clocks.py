"""Timing benchmark cases: warm-up, then rounds of timed calls, median and spread.

The precisions being compared are timed in alternation (fp32, bf16, fp32, bf16, ... a block of calls each per
round), the way a fair comparison must be made on a machine whose load changes: a neighbour that starts mid-case
slows both alike instead of whichever happened to run second. Each round is tagged with the contention seen
during it (contention.py); calls from contended rounds are kept out of the figures, and a case keeps timing
(within its budget) until it has enough calls from quiet rounds. A case that never gets them is marked
contended, and the report says its figures are unreliable.

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
    other_load: float | None = None  # CPU share other processes took over the rounds (CPU clock only)
    clean: list[float] | None = None  # the calls of rounds that saw no contention (None: not watched)
    steal: float | None = None  # steal share over the rounds (CPU clock in a VM)
    contention: str | None = None  # why rounds were contended (the most loaded one), None when none was

    @property
    def contended(self) -> bool:
        """Too few calls came from quiet rounds to stand for the hardware."""
        return self.clean is not None and len(self.clean) < MIN_REPS

    def summary(self) -> dict:
        used = self.times if self.clean is None or self.contended else self.clean
        ordered = sorted(used)
        return {
            "median_s": statistics.median(ordered),
            "mean_s": statistics.fmean(ordered),
            "min_s": ordered[0],
            "p10_s": _quantile(ordered, 0.10),
            "p25_s": _quantile(ordered, 0.25),
            "p75_s": _quantile(ordered, 0.75),
            "p90_s": _quantile(ordered, 0.90),
            "reps": len(ordered),
            "timed_reps": len(self.times),
            "warmup_reps": self.warmup_reps,
            "budget_cut": self.budget_cut,
            "other_load": self.other_load,
            "steal": self.steal,
            "contended": self.contended,
            "contention": self.contention,
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


@dataclass
class Warm:
    """A call after its warm-up: how many warm-up calls ran, the first one's time, and one call's estimate."""

    reps: int
    first_s: float
    estimate_s: float
    spent_s: float


def warm_up(call: Callable[[], object], clock, *, measure_s: float, case_budget_s: float) -> Warm:
    """Warm up for about a quarter of `measure_s`. The first call pays for kernel selection and cold caches, so a
    second one follows unless the first alone filled the warm-up time (a long call's one-off costs are small
    beside it) or would eat into the half of the budget kept for timing. Raises OverBudget for a slow path."""
    began = time.perf_counter()
    first = clock.run(call, 1)[0]
    if first > case_budget_s:
        raise OverBudget(first)
    warm = [first]
    warmup_s = measure_s / 4
    while len(warm) < 50:
        elapsed = time.perf_counter() - began
        if elapsed >= warmup_s and (len(warm) >= 2 or first >= warmup_s):
            break
        if elapsed + warm[-1] > case_budget_s / 2:
            break
        warm += clock.run(call, 1)
    estimate = min(warm[1:]) if len(warm) > 1 else first
    return Warm(len(warm), first, estimate, time.perf_counter() - began)


ROUNDS = 8  # blocks per precision in one measuring time: enough to tell a passing neighbour from the rate
# On a CPU a round lasts at least this long: /proc/stat counts 10 ms ticks, and over shorter rounds a neighbour
# taking a third of the CPU hides inside the ticks' uncertainty (contention.OtherLoad).
MIN_CPU_ROUND_S = 0.25
QUIET_ROUNDS_LIMIT = 0.20  # others' mean share over the rounds that each passed: above it, none was quiet
RETRY_FACTOR = 2.0  # a contended case may keep timing this many measuring times more, within its budget


@dataclass
class _Track:
    """One call's timing across rounds."""

    call: Callable[[], object]
    warm: Warm
    times: list[float]
    clean: list[float]
    spent_s: float  # warm-up plus timed blocks: what counts against the case budget
    budget_cut: bool = False
    done: bool = False


def measure_rounds(
    calls: dict[str, tuple[Callable[[], object], Warm]],
    clock,
    *,
    measure_s: float,
    case_budget_s: float,
    watch=None,
    min_reps: int = MIN_REPS,
    retry: bool = True,
) -> dict[str, Timing]:
    """Time several warmed-up calls in alternation, a block of each per round, until each has been timed for
    `measure_s` (at least `min_reps` calls), never starting a block that would take one past `case_budget_s`.

    `watch` (contention.OtherLoad or GpuWatch, or None) tags each round; with it, a call short of `min_reps` calls
    from quiet rounds keeps going for up to RETRY_FACTOR x `measure_s` more when `retry` allows."""
    tracks = {name: _Track(call, warm, [], [], warm.spent_s) for name, (call, warm) in calls.items()}
    block_s = measure_s / ROUNDS
    if watch is not None and clock.shares_host:  # the CPU's counters move in ticks: a round must span enough of them
        block_s = max(block_s, MIN_CPU_ROUND_S / max(1, len(tracks)))
    shares = watch is not None and clock.shares_host
    spans = others = steal = 0.0  # shares weighed by each round's span: one short round's ticks do not dominate
    quiet_spans = quiet_others = 0.0  # the same over the rounds that passed as quiet
    why, why_share = None, -1.0
    while True:
        active = [t for t in tracks.values() if not t.done]
        if not active:
            break
        if watch is not None:
            watch.restart()
        ran: list[tuple[_Track, list[float]]] = []
        for track in active:
            timed = sum(track.times)
            enough = len(track.times) >= min_reps and timed >= measure_s
            quiet_enough = watch is None or len(track.clean) >= min_reps or not retry
            over_retry = timed >= measure_s * (1 + RETRY_FACTOR)
            if enough and (quiet_enough or over_retry):
                track.done = True
                continue
            estimate = track.warm.estimate_s
            if track.times and track.spent_s + estimate > case_budget_s:
                track.budget_cut = len(track.times) < min_reps or timed < measure_s
                track.done = True
                continue
            room = case_budget_s - track.spent_s
            batch = max(1, min(clock.max_batch, int(min(block_s, room) / max(estimate, 1e-9))))
            started = time.perf_counter()
            times = clock.run(track.call, batch)
            track.spent_s += time.perf_counter() - started
            track.times += times
            ran.append((track, times))
        if watch is None or not ran:
            continue
        seen = watch.seen()
        if seen.others is not None:
            spans += seen.span_s
            others += seen.others * seen.span_s
            steal += (seen.steal or 0.0) * seen.span_s
        if seen.reason is None:
            for track, times in ran:
                track.clean += times
            quiet_spans += seen.span_s
            quiet_others += (seen.others or 0.0) * seen.span_s
        elif (seen.others or 0.0) > why_share:
            why, why_share = seen.reason, seen.others or 0.0
    if quiet_spans and quiet_others / quiet_spans > QUIET_ROUNDS_LIMIT:
        # Each round passed within its ticks' uncertainty, but together they show a neighbour all along (one that
        # takes a third of 2 CPUs hides in a single round's ticks): none of them is quiet.
        share = quiet_others / quiet_spans
        why = why or f"other processes took {share:.0%} of the CPU"
        for track in tracks.values():
            track.clean = []
    return {
        name: Timing(
            t.times,
            t.warm.reps,
            t.warm.first_s,
            t.budget_cut,
            (others / spans if spans else 0.0) if shares else None,
            t.clean if watch is not None else None,
            (steal / spans if spans else 0.0) if shares else None,
            why,
        )
        for name, t in tracks.items()
    }


def measure(
    call: Callable[[], object], clock, *, measure_s: float, case_budget_s: float, min_reps: int = MIN_REPS
) -> Timing:
    """One call, warmed up and timed in rounds (see measure_rounds); contention is watched on the CPU. At least
    one call is timed, so a case whose first call nearly fills the budget can take up to twice the budget."""
    warm = warm_up(call, clock, measure_s=measure_s, case_budget_s=case_budget_s)
    watch = OtherLoad() if clock.shares_host else None
    return measure_rounds(
        {"call": (call, warm)},
        clock,
        measure_s=measure_s,
        case_budget_s=case_budget_s,
        watch=watch,
        min_reps=min_reps,
        retry=False,
    )["call"]
