"""Each GPU process's recent GPU memory and SM share per device, for the process screen's charts.

Kept beside the device history (gpudash.history) with the same capacity: one reading per refresh. A
(pid, device) that no reading lists any more is dropped once its last value leaves the window, so the
buffers stay bounded by the processes listed in the window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from gpudash.models import Sample

Point = tuple[int | None, float | None]  # (GPU memory bytes, SM %) of one reading; None: not listed or n/a


class ProcessHistory:
    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._series: dict[tuple[int, str], deque[Point]] = {}

    def record(self, samples: Mapping[str, Sample]) -> None:
        """One reading: every listed (pid, device) gets its point, every other one held gets a gap."""
        seen: dict[tuple[int, str], Point] = {}
        for key, sample in samples.items():
            for proc in sample.processes or []:
                seen[(proc.pid, key)] = (proc.memory_used_bytes, proc.utilization_pct)
            for instance in sample.mig_instances or []:
                for proc in instance.processes or []:
                    seen.setdefault((proc.pid, key), (proc.memory_used_bytes, proc.utilization_pct))
        for pair, point in seen.items():
            self._series.setdefault(pair, deque(maxlen=self.capacity)).append(point)
        for pair in [p for p in self._series if p not in seen]:
            buffer = self._series[pair]
            buffer.append((None, None))
            if all(point == (None, None) for point in buffer):
                del self._series[pair]

    def devices_of(self, pid: int) -> list[str]:
        """The device keys this pid was listed on within the window, in the order first seen."""
        return [key for (p, key) in self._series if p == pid]

    def memory(self, pid: int, key: str) -> list[int | None]:
        return [m for m, _ in self._series.get((pid, key), ())]

    def utilization(self, pid: int, key: str) -> list[float | None]:
        return [u for _, u in self._series.get((pid, key), ())]

    def __len__(self) -> int:
        return len(self._series)
