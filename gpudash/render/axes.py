"""Chart axes people can read: round ticks (0, 500, 1k, 1.5k; never "778.1") and sizes in powers of two."""

from __future__ import annotations

import math


def nice_step(span: float, count: int) -> float:
    """A step of 1, 2, 2.5 or 5 times a power of ten giving about `count` intervals over `span`."""
    if span <= 0 or count <= 0:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Ticks from 0 to at least `top` in a round step: nice_ticks(778.1) -> [0, 200, 400, 600, 800]."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    step = nice_step(top, count)
    n = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def short_number(value: float) -> str:
    """1500 -> "1.5k", 2_000_000 -> "2M", 250 -> "250", 0.5 -> "0.5"; for axis labels."""
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:g}{suffix}"
    return f"{value:g}"


def size_label(value: float) -> str:
    """A matrix size on a power-of-two axis: 512 -> "512", 4096 -> "4k", 16384 -> "16k"."""
    if value >= 1024 and value % 1024 == 0:
        return f"{int(value) // 1024}k"
    return f"{value:g}"


def power_of_two_ticks(low: float, high: float) -> list[int]:
    """Every power of two from just below `low` to just above `high`: [256, 512, 1024, 2048]."""
    if low <= 0 or high <= 0:
        return []
    first = 2 ** math.floor(math.log2(low))
    last = 2 ** math.ceil(math.log2(high))
    out, tick = [], first
    while tick <= last:
        out.append(int(tick))
        tick *= 2
    return out
