"""Largest batch that fits: grow by doubling until out-of-memory, then bisect (Lightning's binsearch mode).

Pure Python around a `try_batch(size)` callable, so the search is tested with a fake step; the real step
(forward, backward and optimizer step on the GPU) lives in gpudash/recommend/memory_task.py.
OOM detection: torch.OutOfMemoryError, plus the messages of CUDA, HIP
(Lightning's own check misses "HIP out of memory"), the CPU allocator and cuDNN's large-batch failure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

OOM_MESSAGES = (
    "CUDA out of memory",
    "HIP out of memory",
    " out of memory",  # XPU and other backends phrase it "<backend> out of memory"
    "DefaultCPUAllocator: can't allocate memory",
    "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED",  # cuDNN's answer to an oversized batch (Lightning treats it as OOM)
)


def is_oom(exc: BaseException) -> bool:
    torch = sys.modules.get("torch")
    oom_type = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, RuntimeError):
        message = str(exc)
        return any(pattern in message for pattern in OOM_MESSAGES)
    return False


@dataclass
class SearchResult:
    largest_ok: int  # 0 when not even the smallest batch fitted
    first_oom: int | None  # smallest size seen to run out of memory
    trials: list[tuple[int, bool]] = field(default_factory=list)
    limit: int = 0


def find_max_batch(
    try_batch: Callable[[int], object],
    *,
    start: int = 1,
    limit: int = 8192,
    max_trials: int = 25,
    after_oom: Callable[[], None] | None = None,
) -> SearchResult:
    """Call try_batch(n) for growing then bisected n; an OOM means "too big", any other error propagates."""
    if start < 1 or limit < 1:
        raise ValueError("start and limit must be at least 1")
    low, high = 0, None  # largest size that fitted, smallest that did not
    size = min(start, limit)
    trials: list[tuple[int, bool]] = []
    while len(trials) < max_trials:
        fitted = _attempt(try_batch, size, after_oom)
        trials.append((size, fitted))
        if fitted:
            low = size
        else:
            high = size
        if high is None:
            if size >= limit:
                break
            size = min(size * 2, limit)
            continue
        if high - low <= 1:
            break
        size = (low + high) // 2
    return SearchResult(low, high, trials, limit)


def _attempt(try_batch, size: int, after_oom) -> bool:
    try:
        try_batch(size)
        return True
    except BaseException as exc:
        if not is_oom(exc):
            raise
    if after_oom is not None:  # outside the except block: the traceback no longer pins the tensors
        after_oom()
    return False
