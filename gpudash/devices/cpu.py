"""The CPU as a device: model, cores, the ISA features that decide its precisions, live load.

Reads /proc/cpuinfo and psutil only; torch is not needed to describe the CPU.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

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
    path = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return int(path.read_text().strip()) // 1000
    except (OSError, ValueError):
        pass
    freq = psutil.cpu_freq() if hasattr(psutil, "cpu_freq") else None
    if freq and freq.max:
        return int(freq.max)
    # VMs often expose only the current (base) clock here.
    mhz = info.get("cpu MHz")
    return int(float(mhz)) if mhz else None


FIRST_WINDOW_S = 0.1  # the shortest first window that counts: CPU time counts in 10 ms ticks
NEEDS_SECOND_READING = "needs a second reading (gpudash info --watch shows it)"


@dataclass(frozen=True)
class _Window:
    """One end of a measuring window: the machine's CPU times and this process's own."""

    at: float
    busy: float  # CPU-seconds the machine spent working, all CPUs together
    total: float  # CPU-seconds that passed, all CPUs together
    own: float  # of `busy`, this process's own user + system time

    @classmethod
    def now(cls) -> _Window:
        times = psutil.cpu_times()
        # As psutil.cpu_percent counts: guest time is already in user time, and idle and iowait are not busy.
        total = sum(times) - getattr(times, "guest", 0.0) - getattr(times, "guest_nice", 0.0)
        idle = times.idle + getattr(times, "iowait", 0.0)
        mine = os.times()
        return cls(time.monotonic(), total - idle, total, mine.user + mine.system)

    def others_busy_pct(self, end: _Window) -> float:
        """Busy % of the machine between this and `end`, without this process's own share."""
        span = end.total - self.total
        if span <= 0:
            return 0.0
        others = (end.busy - self.busy) - (end.own - self.own)
        return round(min(100.0, max(0.0, 100.0 * others / span)), 1)


class CpuBackend:
    name = "cpu"

    def __init__(self, cpuinfo_path: str = "/proc/cpuinfo") -> None:
        try:
            self.info = parse_cpuinfo(Path(cpuinfo_path).read_text())
        except OSError:
            self.info = {}
        self._first_window: _Window | None = _Window.now()  # the first reading's window starts here

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
                memory_total_bytes=psutil.virtual_memory().total,
                multiprocessors=psutil.cpu_count(logical=False) or os.cpu_count(),
                logical_cores=psutil.cpu_count(logical=True),
                max_clock_mhz=_max_clock_mhz(info),
                cpu_features=features_from_cpuinfo(info),
                sources=["cpu"],
                unavailable=missing,
                extra=extra,
            )
        ]

    def sample(self, index: int = 0) -> Sample:
        missing: dict[str, str] = {}
        memory = psutil.virtual_memory()
        freq = read_field(missing, "sm_clock_mhz", psutil.cpu_freq)
        missing["power_w"] = "no CPU power counter read"
        temp = _cpu_temperature()
        if temp is None:
            missing["temperature_c"] = "no CPU temperature sensor"
        utilization = self._utilization()
        if utilization is None:
            missing["utilization_pct"] = NEEDS_SECOND_READING
        return Sample(
            memory_used_bytes=memory.total - memory.available,
            memory_total_bytes=memory.total,
            utilization_pct=utilization,
            temperature_c=temp,
            sm_clock_mhz=int(freq.current) if freq else None,
            timestamp=time.time(),
            unavailable=missing,
        )

    def _utilization(self) -> float | None:
        """The whole machine's CPU use since the previous reading (psutil). The first reading covers the time
        since this backend was made (the start of discovery) and leaves out gpudash's own CPU time, which in
        that window is mostly its own start-up; shorter than FIRST_WINDOW_S it is no measurement (CPU time
        counts in 10 ms ticks) and the reading is n/a: a one-shot `gpudash info` does not wait for it."""
        first, self._first_window = self._first_window, None
        if first is None:
            return psutil.cpu_percent(interval=None)
        end = _Window.now()
        psutil.cpu_percent(interval=None)  # the next reading measures from here
        if end.at - first.at < FIRST_WINDOW_S:
            return None
        return first.others_busy_pct(end)

    def close(self) -> None:
        pass


def _cpu_temperature() -> float | None:
    reader = getattr(psutil, "sensors_temperatures", None)
    if reader is None:
        return None
    try:
        sensors = reader()
    except Exception:
        return None
    for chip in ("coretemp", "k10temp", "zenpower", "cpu_thermal"):
        if sensors.get(chip):
            return sensors[chip][0].current
    return None
