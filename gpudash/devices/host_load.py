"""How busy the host is: CPU, memory, swap and load average (the line nvitop shows above its processes).

Read with psutil, which gpudash already needs for the processes. CPU% is the share of all logical CPUs
since the previous reading, so the first reading has none (`cpu_pct` None, as top shows nothing useful
until its second screen). The reader keeps its own CPU times: psutil.cpu_percent(None) shares one
baseline per process, which the CPU device's sampler moves too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import psutil

CPU_FIRST_READING = "needs a second reading"


@dataclass
class HostLoad:
    cpu_pct: float | None  # of all logical CPUs together, 0..100
    logical_cpus: int | None
    memory_used_bytes: int | None  # total minus available, as `free` and nvitop count it
    memory_total_bytes: int | None
    swap_used_bytes: int | None
    swap_total_bytes: int | None
    load_average: tuple[float, float, float] | None  # 1, 5 and 15 minutes
    unavailable: dict[str, str] = field(default_factory=dict)  # field -> reason


class HostLoadReader:
    """Remembers the previous CPU times, so each reading's CPU% covers the time since the last one."""

    def __init__(self) -> None:
        self._last: tuple[float, float] | None = None  # (busy, total) CPU seconds at the previous reading

    def read(self) -> HostLoad:
        missing: dict[str, str] = {}
        cpu_pct = self._cpu_pct()
        if cpu_pct is None:
            missing["cpu_pct"] = CPU_FIRST_READING
        memory = psutil.virtual_memory()
        try:
            swap = psutil.swap_memory()
            swap_used: int | None = int(swap.used)
            swap_total: int | None = int(swap.total)
        except (OSError, RuntimeError) as exc:  # /proc/swaps unreadable in some containers
            swap_used = swap_total = None
            missing["swap"] = str(exc) or type(exc).__name__
        try:
            load: tuple[float, float, float] | None = os.getloadavg()
        except (OSError, AttributeError):  # not on Windows
            load = None
            missing["load_average"] = "no load average on this system"
        return HostLoad(
            cpu_pct=cpu_pct,
            logical_cpus=psutil.cpu_count(),
            memory_used_bytes=int(memory.total - memory.available),
            memory_total_bytes=int(memory.total),
            swap_used_bytes=swap_used,
            swap_total_bytes=swap_total,
            load_average=load,
            unavailable=missing,
        )

    def _cpu_pct(self) -> float | None:
        times = psutil.cpu_times()
        total = sum(times)
        idle = times.idle + getattr(times, "iowait", 0.0)
        previous, self._last = self._last, (total - idle, total)
        if previous is None or total <= previous[1]:
            return None
        return round(100.0 * max(0.0, (total - idle) - previous[0]) / (total - previous[1]), 1)
