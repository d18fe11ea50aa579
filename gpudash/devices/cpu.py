"""The CPU as a device: model, cores, the ISA features that decide its precisions, live load.

Reads /proc/cpuinfo and the host's counters (gpudash.devices.host_counters) only; torch is not needed to describe
the CPU.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

from gpudash.devices import host_counters
from gpudash.devices.fields import read_field
from gpudash.models import DeviceInfo, Sample

# /proc/cpuinfo flag -> torch.cpu.get_capabilities() name; the knowledge tables use torch's names.
_X86_FLAGS = {
    "avx2": "avx2",
    "fma": "fma3",
    "avx512f": "avx512_f",
    "avx512_bf16": "avx512_bf16",
    "avx512_fp16": "avx512_fp16",
    "avx512_vnni": "avx512_vnni",
    "avx_vnni": "avx_vnni",
    "amx_bf16": "amx_bf16",
    "amx_int8": "amx_int8",
    "amx_fp16": "amx_fp16",
    "amx_tile": "amx_tile",
}
_ARM_FLAGS = {"bf16": "bf16", "i8mm": "i8mm", "asimddp": "asimddp", "fphp": "fphp", "sve": "sve", "sve2": "sve2"}


def parse_cpuinfo(text: str) -> dict[str, str]:
    """The first processor block of /proc/cpuinfo as a dict."""
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def features_from_cpuinfo(info: dict[str, str]) -> list[str]:
    flags = set((info.get("flags") or info.get("Features") or "").split())
    table = _X86_FLAGS if "flags" in info else _ARM_FLAGS
    return sorted(name for flag, name in table.items() if flag in flags)


def _max_clock_mhz(info: dict[str, str]) -> int | None:
    top = host_counters.cpu_max_clock_mhz()
    if top:
        return top
    # VMs often expose only the current (base) clock here.
    mhz = info.get("cpu MHz")
    return int(float(mhz)) if mhz else None


FIRST_WINDOW_S = 0.1  # the shortest first window that counts: CPU time counts in 10 ms ticks
NEEDS_SECOND_READING = "needs a second reading (gpudash info --watch shows it)"


class _Window(NamedTuple):
    """One end of a measuring window: the machine's CPU times and this process's own."""

    at: float
    busy: float  # CPU-seconds the machine spent working, all CPUs together
    total: float  # CPU-seconds that passed, all CPUs together
    own: float  # of `busy`, this process's own user + system time

    @classmethod
    def now(cls) -> _Window:
        busy, total = host_counters.busy_and_total(host_counters.cpu_times())
        mine = os.times()
        return cls(time.monotonic(), busy, total, mine.user + mine.system)

    def busy_pct(self, end: _Window) -> float:
        """Busy % of the machine between this and `end` (psutil.cpu_percent's figure)."""
        return self._pct(end, end.busy - self.busy)

    def others_busy_pct(self, end: _Window) -> float:
        """Busy % of the machine between this and `end`, without this process's own share."""
        return self._pct(end, (end.busy - self.busy) - (end.own - self.own))

    def _pct(self, end: _Window, busy: float) -> float:
        return host_counters.busy_pct(busy, end.total - self.total) or 0.0  # no time passed: nothing to divide


class CpuBackend:
    name = "cpu"

    def __init__(self, cpuinfo_path: str = "/proc/cpuinfo") -> None:
        try:
            self.info = parse_cpuinfo(Path(cpuinfo_path).read_text())
        except OSError:
            self.info = {}
        self._first_window: _Window | None = _Window.now()  # the first reading's window starts here
        self._last_window: _Window | None = None  # where the next reading's window starts

    def devices(self) -> list[DeviceInfo]:
        info = self.info
        missing: dict[str, str] = {}
        if not info:
            missing["cpu_features"] = "no /proc/cpuinfo on this OS"
        name = info.get("model name") or info.get("Model name")
        if not name:  # no /proc/cpuinfo (macOS, Windows)
            import platform

            name = platform.processor() or "CPU"
        extra = {
            k: info[v]
            for k, v in (("cpu_vendor", "vendor_id"), ("cpu_family", "cpu family"), ("cpu_model", "model"))
            if v in info
        }
        return [
            DeviceInfo(
                vendor="cpu",
                index=0,
                name=name,
                memory_total_bytes=host_counters.memory()[0],
                multiprocessors=host_counters.physical_cores() or os.cpu_count(),
                logical_cores=host_counters.logical_cpus(),
                max_clock_mhz=_max_clock_mhz(info),
                cpu_features=features_from_cpuinfo(info),
                sources=["cpu"],
                unavailable=missing,
                extra=extra,
            )
        ]

    def sample(self, index: int = 0) -> Sample:
        missing: dict[str, str] = {}
        total, available = read_field(missing, "memory_used_bytes", host_counters.memory) or (None, None)
        clock = host_counters.cpu_clock_mhz()
        if clock is None:
            missing["sm_clock_mhz"] = "the kernel gives no CPU clock (no cpufreq, no cpu MHz)"
        missing["power_w"] = "no CPU power counter read"
        temp = host_counters.cpu_temperature_c()
        if temp is None:
            missing["temperature_c"] = "no CPU temperature sensor"
        utilization = self._utilization()
        if utilization is None:
            missing["utilization_pct"] = NEEDS_SECOND_READING
        return Sample(
            memory_used_bytes=total - available if total is not None and available is not None else None,
            memory_total_bytes=total,
            utilization_pct=utilization,
            temperature_c=temp,
            sm_clock_mhz=int(clock) if clock is not None else None,
            timestamp=time.time(),
            unavailable=missing,
        )

    def _utilization(self) -> float | None:
        """The whole machine's CPU use since the previous reading. The first reading covers the time since this
        backend was made (the start of discovery) and leaves out gpudash's own CPU time, which in that window is
        mostly its own start-up; shorter than FIRST_WINDOW_S it is no measurement (CPU time counts in 10 ms
        ticks) and the reading is n/a: a one-shot `gpudash info` does not wait for it."""
        first, self._first_window = self._first_window, None
        end = _Window.now()
        previous, self._last_window = self._last_window, end  # the next reading measures from here
        if first is None:
            return previous.busy_pct(end) if previous is not None else None
        if end.at - first.at < FIRST_WINDOW_S:
            return None
        return first.others_busy_pct(end)

    def close(self) -> None:
        pass
