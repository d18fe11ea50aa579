"""How busy the host is: CPU, memory, swap and load average (the line nvitop shows above its processes).

Read from the host's counters (gpudash.devices.host_counters: /proc on Linux, psutil elsewhere). CPU% is the
share of all logical CPUs since the previous reading, so the first reading has none (`cpu_pct` None, as top
shows nothing useful until its second screen); the reader keeps its own CPU times.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from gpudash.devices import host_counters

CPU_FIRST_READING = "needs a second reading"


class HostLoad(NamedTuple):
    cpu_pct: float | None  # of all logical CPUs together, 0..100
    logical_cpus: int | None
    memory_used_bytes: int | None  # total minus available, as `free` and nvitop count it
    memory_total_bytes: int | None
    swap_used_bytes: int | None
    swap_total_bytes: int | None
    load_average: tuple[float, float, float] | None  # 1, 5 and 15 minutes
    unavailable: dict[str, str]  # field -> reason


class HostLoadReader:
    """Remembers the previous CPU times, so each reading's CPU% covers the time since the last one."""

    def __init__(self) -> None:
        self._last: tuple[float, float] | None = None  # (busy, total) CPU seconds at the previous reading

    def read(self) -> HostLoad:
        missing: dict[str, str] = {}
        cpu_pct = self._cpu_pct()
        if cpu_pct is None:
            missing["cpu_pct"] = CPU_FIRST_READING
        total, available = host_counters.memory()
        swap_used: int | None
        swap_total: int | None
        try:
            swap_used, swap_total = host_counters.swap()
        except (OSError, RuntimeError) as exc:  # a container's /proc without swap lines, say
            swap_used = swap_total = None
            missing["swap"] = str(exc) or type(exc).__name__
        try:
            load: tuple[float, float, float] | None = os.getloadavg()
        except (OSError, AttributeError):  # not on Windows
            load = None
            missing["load_average"] = "no load average on this system"
        return HostLoad(
            cpu_pct=cpu_pct,
            logical_cpus=host_counters.logical_cpus(),
            memory_used_bytes=total - available,
            memory_total_bytes=total,
            swap_used_bytes=swap_used,
            swap_total_bytes=swap_total,
            load_average=load,
            unavailable=missing,
        )

    def _cpu_pct(self) -> float | None:
        busy, total = host_counters.busy_and_total(host_counters.cpu_times())
        previous, self._last = self._last, (busy, total)
        if previous is None:
            return None
        return host_counters.busy_pct(busy - previous[0], total - previous[1])
