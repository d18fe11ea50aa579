"""memory_management(): measure memory around a block, then free what the platform lets a process free.

On leaving the block (also when it raises): gc.collect() everywhere; torch.cuda.empty_cache() on a CUDA or ROCm
device torch has initialised (cached blocks go back to the driver, so other processes and the next
measurement see them free; tensors still referenced stay); on Linux with glibc, malloc_trim(0) hands freed
heap pages back to the OS. The report says what was measured before and after and which of these ran.
CUDA figures are torch's allocator's (memory_allocated / memory_reserved); CPU figures are the process's
resident set (psutil).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

GIB = 1024**3
KEEP_REPORTS = 100

_reports: deque[MemoryReport] = deque(maxlen=KEEP_REPORTS)  # what get_performance_stats() shows
_reports_lock = threading.Lock()


def _torch() -> Any:
    return sys.modules.get("torch")  # training code has imported it; a block without torch measures the CPU only


def current_device(device: Any = None) -> str:
    """ "cuda:N" for a CUDA/ROCm device torch has initialised (or that is named), else "cpu"."""
    torch = _torch()
    if device is not None:
        text = str(device)
        if text == "cuda" and torch is not None:
            return f"cuda:{torch.cuda.current_device()}"
        return text
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return f"cuda:{torch.cuda.current_device()}"
    return "cpu"


def _cuda_live(device: str) -> bool:
    torch = _torch()
    return device.startswith("cuda") and torch is not None and torch.cuda.is_initialized()


def snapshot(device: str) -> dict[str, int]:
    """Memory figures now: torch's allocator on a CUDA device, the process's resident set always."""
    import psutil

    out = {"process_rss_bytes": int(psutil.Process().memory_info().rss)}
    if _cuda_live(device):
        torch = _torch()
        out["allocated_bytes"] = int(torch.cuda.memory_allocated(device))
        out["reserved_bytes"] = int(torch.cuda.memory_reserved(device))
    return out


def _malloc_trim() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        trim = libc.malloc_trim  # glibc only (musl has none)
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True


def free(device: str, collect: bool = True, empty_cache: bool = True, trim: bool = True) -> list[str]:
    """Free what the platform allows; returns what ran."""
    done = []
    if collect:
        done.append(f"gc.collect() found {gc.collect()} unreachable objects")
    if empty_cache and _cuda_live(device):
        torch = _torch()
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        done.append("torch.cuda.empty_cache() returned cached blocks to the driver")
    if trim and _malloc_trim():
        done.append("malloc_trim(0) returned freed heap pages to the OS")
    return done


@dataclass
class MemoryReport:
    operation: str
    device: str
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    freed: list[str] = field(default_factory=list)  # what ran on the way out
    duration_s: float = 0.0
    raised: str | None = None  # the exception type that left the block, if one did

    def change(self) -> dict[str, int]:
        """after - before, per figure (negative: less memory in use after the block)."""
        return {k: self.after[k] - self.before[k] for k in self.before if k in self.after}

    def summary(self) -> str:
        parts = []
        for name, delta in self.change().items():
            label = name.removesuffix("_bytes").replace("_", " ")
            parts.append(
                f"{label} {self.before[name] / GIB:.2f} -> {self.after[name] / GIB:.2f} GiB ({delta / 2**20:+.0f} MiB)"
            )
        return f"memory_management({self.operation!r}) on {self.device}: {'; '.join(parts)} in {self.duration_s:.2f} s"

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "device": self.device,
            "before": dict(self.before),
            "after": dict(self.after),
            "change": self.change(),
            "freed": list(self.freed),
            "duration_s": self.duration_s,
            "raised": self.raised,
        }


def recorded_reports() -> list[MemoryReport]:
    """The latest reports of memory_management blocks (record=True), oldest first."""
    with _reports_lock:
        return list(_reports)


def clear_reports() -> None:
    with _reports_lock:
        _reports.clear()


@contextmanager
def memory_management(
    operation_name: str = "block",
    device: Any = None,
    *,
    empty_cache: bool = True,
    collect: bool = True,
    trim: bool = True,
    verbose: bool = False,
    record: bool = True,
) -> Iterator[MemoryReport]:
    """`with memory_management("training") as report:` measures memory before the block and, on leaving it,
    frees what the platform allows and measures again (report.before, .after, .change(), .freed).
    `verbose` prints report.summary() to stderr; `record` keeps the report for get_performance_stats()."""
    where = current_device(device)
    report = MemoryReport(operation_name, where, before=snapshot(where))
    start = time.perf_counter()
    try:
        yield report
    except BaseException as exc:
        report.raised = type(exc).__name__
        raise
    finally:
        report.freed = free(where, collect=collect, empty_cache=empty_cache, trim=trim)
        report.after = snapshot(where)
        report.duration_s = time.perf_counter() - start
        if record:
            with _reports_lock:
                _reports.append(report)
        if verbose:
            print(report.summary(), file=sys.stderr)
