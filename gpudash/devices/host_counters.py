"""The host's CPU times, memory, swap, CPU clock and CPU temperature: read from /proc and /sys on Linux, from
psutil elsewhere.

On Linux each is one or a few small files, and psutil's import alone cost the dashboard 9 ms of its first frame
on a 2-vCPU VM (docs/performance.md, eighth pass), for the CPU's row and the host line, which read nothing else
from it. The readers follow psutil's Linux code (psutil/_pslinux.py) so that both give the same figures for the
same files (tests/test_host_counters.py compares them); psutil is still what reads processes.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Any

LINUX = sys.platform.startswith("linux")
ROOT = "/"  # where /proc and /sys are read from (a test points it at a folder of its own)
# /proc/stat's "cpu" line, in its order; older kernels stop early (guest from 2.6.24, guest_nice from 2.6.33)
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
CPU_TEMPERATURE_CHIPS = ("coretemp", "k10temp", "zenpower", "cpu_thermal")  # hwmon names, in order of trust
_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _path(path: str) -> str:
    return os.path.join(ROOT, path.lstrip("/"))


def _read(path: str) -> str:
    with open(_path(path), encoding="utf-8", errors="replace") as f:
        return f.read()


def cpu_times() -> dict[str, float]:
    """Seconds each CPU state has taken since boot, all CPUs together (psutil.cpu_times()'s fields)."""
    if not LINUX:
        import psutil

        return {k: float(v) for k, v in psutil.cpu_times()._asdict().items()}
    for line in _read("/proc/stat").splitlines():
        if line.startswith("cpu "):
            values = [int(v) / _TICKS_PER_S for v in line.split()[1:]]  # as psutil divides
            return dict(zip(CPU_FIELDS, values))
    raise OSError("no cpu line in /proc/stat")


def busy_and_total(times: dict[str, float]) -> tuple[float, float]:
    """(busy, total) seconds as psutil.cpu_percent counts them: guest time is already in user time, and idle
    and iowait are not busy."""
    total = sum(times.values()) - times.get("guest", 0.0) - times.get("guest_nice", 0.0)
    return total - times.get("idle", 0.0) - times.get("iowait", 0.0), total


def busy_pct(busy_s: float, span_s: float) -> float | None:
    """`busy_s` of `span_s` CPU-seconds as a percentage, 0-100 to one decimal, as psutil.cpu_percent gives it;
    None when no CPU time passed."""
    if span_s <= 0:
        return None
    return round(min(100.0, max(0.0, 100.0 * busy_s / span_s)), 1)


def memory() -> tuple[int, int]:
    """(total, available) bytes of RAM; available as the kernel estimates it (MemAvailable), what `free` and
    psutil.virtual_memory() show."""
    if not LINUX:
        import psutil

        vm = psutil.virtual_memory()
        return int(vm.total), int(vm.available)
    info = _meminfo()
    total = _field(info, "MemTotal")
    if "MemAvailable" in info:
        return total, info["MemAvailable"]
    # Kernels before 3.14 have no estimate: free memory and the page cache, which the kernel can give back.
    return total, min(total, info.get("MemFree", 0) + info.get("Buffers", 0) + info.get("Cached", 0))


def swap() -> tuple[int, int]:
    """(used, total) bytes of swap; (0, 0) where there is none."""
    if not LINUX:
        import psutil

        sw = psutil.swap_memory()
        return int(sw.used), int(sw.total)
    info = _meminfo()
    total = _field(info, "SwapTotal")
    return total - _field(info, "SwapFree"), total


def _meminfo() -> dict[str, int]:
    """/proc/meminfo's figures, in bytes."""
    values = {}
    for line in _read("/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            values[name] = int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    return values


def _field(info: dict[str, int], name: str) -> int:
    if name not in info:
        raise OSError(f"/proc/meminfo has no {name}")  # a container's own /proc may leave lines out
    return info[name]


def logical_cpus() -> int | None:
    return os.cpu_count()  # what psutil.cpu_count() gives on Linux too: the CPUs online


def physical_cores() -> int | None:
    """Cores, each counted once however many threads it runs; None where the system does not say."""
    if not LINUX:
        import psutil

        return psutil.cpu_count(logical=False)
    # Each core's CPUs list the same siblings; thread_siblings_list is the older name of core_cpus_list.
    for name in ("core_cpus_list", "thread_siblings_list"):
        lists = set()
        for path in glob.glob(_path(f"/sys/devices/system/cpu/cpu[0-9]*/topology/{name}")):
            try:
                with open(path, encoding="utf-8") as f:
                    lists.add(f.read().strip())
            except OSError:
                continue
        if lists:
            return len(lists)
    cores: dict[str, int] = {}  # physical id -> cpu cores, from /proc/cpuinfo
    for block in _read("/proc/cpuinfo").split("\n\n"):
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in block.splitlines())}
        if "physical id" in fields and fields.get("cpu cores", "").isdigit():
            cores[fields["physical id"]] = int(fields["cpu cores"])
    return sum(cores.values()) or None


def cpu_clock_mhz() -> float | None:
    """The CPUs' current clock, averaged over them: cpufreq's where the kernel has it, else /proc/cpuinfo's
    "cpu MHz" (VMs); None where neither says."""
    if not LINUX:
        import psutil

        freq = psutil.cpu_freq()
        return float(freq.current) if freq else None
    policies = glob.glob(_path("/sys/devices/system/cpu/cpufreq/policy[0-9]*")) or glob.glob(
        _path("/sys/devices/system/cpu/cpu[0-9]*/cpufreq")
    )
    khz = [
        _int_file(os.path.join(p, "scaling_cur_freq")) or _int_file(os.path.join(p, "cpuinfo_cur_freq"))
        for p in policies
    ]
    known = [k for k in khz if k]
    if known:
        return sum(known) / len(known) / 1000
    try:
        text = _read("/proc/cpuinfo")
    except OSError:
        return None
    mhz = [_number(line.partition(":")[2]) for line in text.splitlines() if line.lower().startswith("cpu mhz")]
    known_mhz = [m for m in mhz if m]
    return sum(known_mhz) / len(known_mhz) if known_mhz else None


def cpu_max_clock_mhz() -> int | None:
    """The CPU's top clock (cpufreq's cpuinfo_max_freq of CPU 0); None where the kernel does not say (VMs)."""
    if not LINUX:
        import psutil

        freq = psutil.cpu_freq()
        return int(freq.max) if freq and freq.max else None
    khz = _int_file(_path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
    return khz // 1000 if khz else None


def cpu_temperature_c() -> float | None:
    """The first sensor of the first CPU chip the kernel's hwmon has (coretemp's package sensor on Intel,
    k10temp's Tctl on AMD), in psutil.sensors_temperatures()'s order; None where there is none (most VMs)."""
    if not LINUX:
        return _psutil_cpu_temperature()
    sensors: dict[str, list[str]] = {}
    bases = glob.glob(_path("/sys/class/hwmon/hwmon*/temp*_*")) + glob.glob(
        _path("/sys/class/hwmon/hwmon*/device/temp*_*")
    )
    for base in sorted({os.path.join(os.path.dirname(p), os.path.basename(p).split("_")[0]) for p in bases}):
        try:
            with open(os.path.join(os.path.dirname(base), "name"), encoding="utf-8") as f:
                chip = f.read().strip()
        except OSError:
            continue
        sensors.setdefault(chip, []).append(base)
    for chip in CPU_TEMPERATURE_CHIPS:
        for base in sensors.get(chip, []):
            millidegrees = _int_file(base + "_input")
            if millidegrees is not None:
                return millidegrees / 1000.0
    return None


def _psutil_cpu_temperature() -> float | None:
    import psutil

    reader: Any = getattr(psutil, "sensors_temperatures", None)  # not on macOS or Windows
    if reader is None:
        return None
    try:
        sensors = reader()
    except Exception:
        return None
    for chip in CPU_TEMPERATURE_CHIPS:
        if sensors.get(chip):
            return float(sensors[chip][0].current)
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # a line this parser does not know: left out, not the whole reading
        return None


def _int_file(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None
