"""The CPU as a device: model, cores, the ISA features that decide its precisions, live load.

Reads /proc/cpuinfo and psutil only; torch is not needed to describe the CPU.
"""

from __future__ import annotations

import os
import platform
import time
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


class CpuBackend:
    name = "cpu"

    def __init__(self, cpuinfo_path: str = "/proc/cpuinfo") -> None:
        try:
            self.info = parse_cpuinfo(Path(cpuinfo_path).read_text())
        except OSError:
            self.info = {}
        psutil.cpu_percent(interval=None)  # primes the counter: the first reading is otherwise 0
        self._last = time.monotonic()

    def devices(self) -> list[DeviceInfo]:
        info = self.info
        missing: dict[str, str] = {}
        if not info:
            missing["cpu_features"] = "no /proc/cpuinfo on this OS"
        name = info.get("model name") or info.get("Model name") or platform.processor() or "CPU"
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
        return Sample(
            memory_used_bytes=memory.total - memory.available,
            memory_total_bytes=memory.total,
            utilization_pct=self._utilization(),
            temperature_c=temp,
            sm_clock_mhz=int(freq.current) if freq else None,
            timestamp=time.time(),
            unavailable=missing,
        )

    def _utilization(self) -> float:
        # psutil measures since the previous call; a one-shot `info` right after start-up would read
        # a meaningless 0-ms window, so wait a tenth of a second then (as gpustat does).
        window = 0.1 if time.monotonic() - self._last < 0.05 else None
        self._last = time.monotonic()
        return psutil.cpu_percent(interval=window)

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
