"""A small profiler for training code: per-operation wall time and memory, and get_performance_stats().

    from gpudash.runtime import profiler, get_performance_stats
    with profiler.profile("forward"):
        out = model(batch)
    loss = profiler.profile_operation("loss", criterion, out, target)
    stats = get_performance_stats()      # {"platform_info", "operation_times", "memory", "memory_management"}

Times are wall clock around the block; on a CUDA/ROCm device torch has initialised, the device is synchronised
before and after, so the time covers the kernels and not only their launch. Memory on such a device is torch's
allocator: the change in allocated bytes and the peak above the start (the peak counter is reset at the start
of each profiled block). On the CPU it is the process's resident set (psutil) and how much the process's
lifetime peak (getrusage ru_maxrss) grew during the block.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gpudash.runtime.memory import _cuda_live, _torch, clear_reports, current_device, recorded_reports

T = TypeVar("T")


def _max_rss_bytes() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # kilobytes on Linux, bytes on macOS


@dataclass
class OperationStats:
    calls: int = 0
    total_s: float = 0.0
    min_s: float = math.inf
    max_s: float = 0.0
    last_s: float = 0.0
    memory_change_bytes: int = 0  # allocated (CUDA) or resident (CPU) bytes after - before, summed over calls
    peak_bytes: int = 0  # the largest rise above the start any call saw (CUDA peak; CPU lifetime-peak growth)
    device: str = "cpu"
    measured: str = "process resident set"  # or "torch allocator" (a CUDA/ROCm device torch initialised)

    def add(self, seconds: float, change: int, peak: int) -> None:
        self.calls += 1
        self.total_s += seconds
        self.min_s, self.max_s, self.last_s = min(self.min_s, seconds), max(self.max_s, seconds), seconds
        self.memory_change_bytes += change
        self.peak_bytes = max(self.peak_bytes, peak)

    def times(self) -> dict[str, float | int]:
        return {
            "calls": self.calls,
            "total_s": self.total_s,
            "mean_s": self.total_s / self.calls if self.calls else 0.0,
            "min_s": self.min_s if self.calls else 0.0,
            "max_s": self.max_s,
            "last_s": self.last_s,
        }

    def memory(self) -> dict[str, int | str]:
        return {
            "device": self.device,
            "measured": self.measured,
            "change_bytes": self.memory_change_bytes,
            "peak_above_start_bytes": self.peak_bytes,
        }


@dataclass
class Profiler:
    device: Any = None  # None: the CUDA device torch has initialised, else the CPU
    sync: bool = True
    operations: dict[str, OperationStats] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @contextmanager
    def profile(self, name: str, device: Any = None) -> Iterator[None]:
        """Time and measure the block under `name` (calls accumulate)."""
        where = current_device(device if device is not None else self.device)
        cuda = _cuda_live(where)
        torch = _torch()
        if cuda:
            if self.sync:
                torch.cuda.synchronize(where)
            torch.cuda.reset_peak_memory_stats(where)
            start_mem = int(torch.cuda.memory_allocated(where))
            start_peak = None
        else:
            import psutil

            start_mem = int(psutil.Process().memory_info().rss)
            start_peak = _max_rss_bytes()
        start = time.perf_counter()
        try:
            yield
        finally:
            if cuda and self.sync:
                torch.cuda.synchronize(where)
            seconds = time.perf_counter() - start
            if cuda:
                end_mem = int(torch.cuda.memory_allocated(where))
                peak = int(torch.cuda.max_memory_allocated(where)) - start_mem
            else:
                import psutil

                end_mem = int(psutil.Process().memory_info().rss)
                end_peak = _max_rss_bytes()
                peak = (end_peak - start_peak) if end_peak is not None and start_peak is not None else 0
            with self._lock:
                measured = "torch allocator" if cuda else "process resident set"
                stats = self.operations.setdefault(name, OperationStats(device=where, measured=measured))
                stats.add(seconds, end_mem - start_mem, max(0, peak))

    def profile_operation(self, name: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(*args, **kwargs), profiled under `name`; returns its result."""
        with self.profile(name):
            return fn(*args, **kwargs)

    def reset(self) -> None:
        """Forget the operations, and the process's memory_management reports."""
        with self._lock:
            self.operations.clear()
        clear_reports()

    def stats(self, platform_info: dict[str, Any] | None = None) -> dict[str, Any]:
        """The operations' times and memory, with the process's latest memory_management reports."""
        with self._lock:
            ops = dict(self.operations)
        reports = recorded_reports()
        return {
            "platform_info": platform_info if platform_info is not None else {},
            "operation_times": {name: s.times() for name, s in ops.items()},
            "memory": {name: s.memory() for name, s in ops.items()},
            "memory_management": [r.to_dict() for r in reports],
        }


profiler = Profiler()  # the process's default profiler


def profile(name: str, device: Any = None):
    """`with profile("forward"):` on the default profiler."""
    return profiler.profile(name, device)


def get_performance_stats(device: Any = None, *, replay: str | None = None) -> dict[str, Any]:
    """The default profiler's figures, with what gpudash knows of the device they ran on (platform_info)."""
    from gpudash.runtime.platform import platform_info

    return profiler.stats(platform_info(device, replay=replay))
