"""The host's counters read from /proc and /sys (gpudash.devices.host_counters): the figures psutil gives for
the same files, on this machine and on made-up ones (old kernels, real-iron cpufreq and sensors, a container
without swap lines), and psutil's own where there is no /proc."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

from gpudash.devices import host_counters
from gpudash.devices.cpu import CpuBackend
from gpudash.devices.host_load import HostLoadReader

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and /sys")


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def fake_root(monkeypatch, tmp_path):
    """A made-up machine's /proc and /sys under tmp_path; each test writes the files it needs."""
    monkeypatch.setattr(host_counters, "ROOT", str(tmp_path))
    monkeypatch.setattr(host_counters, "LINUX", True)
    return tmp_path


MEMINFO = "MemTotal:       16000000 kB\nMemFree:         2000000 kB\nMemAvailable:    9000000 kB\n"
MEMINFO += "Buffers:          100000 kB\nCached:          3000000 kB\nSwapTotal:       4000000 kB\nSwapFree:        3000000 kB\n"


@linux_only
def test_this_machines_figures_are_psutils():
    before = psutil.cpu_times()._asdict()
    times = host_counters.cpu_times()
    after = psutil.cpu_times()._asdict()
    assert set(times) == set(before)  # the same fields, named alike
    assert all(before[k] <= times[k] <= after[k] for k in times), (before, times, after)
    total, available = host_counters.memory()
    vm = psutil.virtual_memory()
    assert total == vm.total and abs(available - vm.available) < 256 * 2**20
    assert host_counters.swap()[1] == psutil.swap_memory().total
    assert host_counters.logical_cpus() == psutil.cpu_count()
    assert host_counters.physical_cores() == psutil.cpu_count(logical=False)
    freq = psutil.cpu_freq()
    clock = host_counters.cpu_clock_mhz()
    assert (clock is None) == (freq is None)
    if freq is not None and clock is not None:
        assert 0.5 * freq.current <= clock <= 2 * freq.current  # a clock moves between two reads
    sensors = psutil.sensors_temperatures()
    chips = [c for c in host_counters.CPU_TEMPERATURE_CHIPS if sensors.get(c)]
    temperature = host_counters.cpu_temperature_c()
    assert (temperature is None) == (not chips)
    if chips and temperature is not None:
        assert abs(temperature - sensors[chips[0]][0].current) < 10  # a sensor moves between two reads


def test_without_proc_psutil_answers(monkeypatch):
    """macOS and Windows: every figure is psutil's."""
    monkeypatch.setattr(host_counters, "LINUX", False)
    assert set(host_counters.cpu_times()) == set(psutil.cpu_times()._fields)
    assert host_counters.memory()[0] == psutil.virtual_memory().total
    assert host_counters.swap()[1] == psutil.swap_memory().total
    assert host_counters.physical_cores() == psutil.cpu_count(logical=False)


def test_an_old_kernels_cpu_line_has_fewer_fields(fake_root):
    # Linux 2.6.11-2.6.23: no guest columns. 100 ticks a second on every Linux gpudash supports.
    _write(fake_root, {"/proc/stat": "cpu  400 0 100 1500 0 0 0 0\ncpu0 400 0 100 1500 0 0 0 0\n"})
    times = host_counters.cpu_times()
    assert set(times) == {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}
    busy, total = host_counters.busy_and_total(times)
    assert times["user"] == pytest.approx(400 / host_counters._TICKS_PER_S)
    assert busy / total == pytest.approx(0.25)


def test_guest_time_is_counted_once(fake_root):
    # A hypervisor's guests: their time is in user already (as psutil.cpu_percent counts it).
    _write(fake_root, {"/proc/stat": "cpu  600 0 100 300 0 0 0 0 400 0\n"})
    busy, total = host_counters.busy_and_total(host_counters.cpu_times())
    assert busy / total == pytest.approx(0.7)


def test_memory_without_the_kernels_estimate_counts_the_page_cache(fake_root):
    _write(fake_root, {"/proc/meminfo": MEMINFO.replace("MemAvailable:    9000000 kB\n", "")})
    assert host_counters.memory() == (16000000 * 1024, (2000000 + 100000 + 3000000) * 1024)
    _write(fake_root, {"/proc/meminfo": MEMINFO})
    assert host_counters.memory() == (16000000 * 1024, 9000000 * 1024)
    assert host_counters.swap() == (1000000 * 1024, 4000000 * 1024)


def test_a_proc_without_swap_lines_says_so_on_the_host_line(fake_root):
    _write(fake_root, {"/proc/meminfo": MEMINFO.split("SwapTotal")[0], "/proc/stat": "cpu  1 0 1 8 0 0 0 0 0 0\n"})
    with pytest.raises(OSError, match="/proc/meminfo has no SwapTotal"):
        host_counters.swap()
    load = HostLoadReader().read()
    assert load.swap_total_bytes is None and load.unavailable["swap"] == "/proc/meminfo has no SwapTotal"
    assert load.memory_total_bytes == 16000000 * 1024 and load.memory_used_bytes == 7000000 * 1024


def test_cores_are_counted_once_however_many_threads_they_run(fake_root):
    topology = "/sys/devices/system/cpu/cpu{}/topology/core_cpus_list"
    _write(fake_root, {topology.format(i): siblings for i, siblings in enumerate(["0,2", "1,3", "0,2", "1,3"])})
    assert host_counters.physical_cores() == 2


def test_without_topology_cores_come_from_cpuinfo(fake_root):
    block = "processor\t: {}\nphysical id\t: {}\ncpu cores\t: 8\nmodel name\t: X\n"
    _write(fake_root, {"/proc/cpuinfo": "\n".join(block.format(i, i // 16) for i in range(32))})
    assert host_counters.physical_cores() == 16  # two sockets of 8 cores
    _write(fake_root, {"/proc/cpuinfo": "processor\t: 0\nmodel name\t: X\n"})
    assert host_counters.physical_cores() is None


def test_the_clock_is_cpufreqs_average_else_cpuinfos(fake_root):
    _write(
        fake_root, {"/proc/cpuinfo": "processor\t: 0\ncpu MHz\t\t: 2600.000\n\nprocessor\t: 1\ncpu MHz\t\t: 2400.000\n"}
    )
    assert host_counters.cpu_clock_mhz() == pytest.approx(2500.0)  # a VM: no cpufreq
    _write(fake_root, {"/proc/cpuinfo": "processor\t: 0\ncpu MHz\t\t: 2600.000\ncpu MHz dynamic : ?\n"})
    assert host_counters.cpu_clock_mhz() == pytest.approx(2600.0)  # a line it cannot read is left out
    assert host_counters.cpu_max_clock_mhz() is None
    policy = "/sys/devices/system/cpu/cpufreq/policy{}/scaling_cur_freq"
    _write(fake_root, {policy.format(0): "3000000\n", policy.format(1): "1000000\n"})
    _write(fake_root, {"/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3700000\n"})
    assert host_counters.cpu_clock_mhz() == pytest.approx(2000.0)
    assert host_counters.cpu_max_clock_mhz() == 3700


def test_the_cpu_temperature_is_the_first_cpu_chips_first_sensor(fake_root):
    hwmon = "/sys/class/hwmon/hwmon{}/{}"
    _write(
        fake_root,
        {
            hwmon.format(0, "name"): "acpitz\n",
            hwmon.format(0, "temp1_input"): "27800\n",  # the board, not the CPU
            hwmon.format(1, "name"): "coretemp\n",
            hwmon.format(1, "temp2_input"): "51000\n",
            hwmon.format(1, "temp1_input"): "not a number\n",  # unreadable: the next sensor answers
            hwmon.format(1, "temp10_input"): "49000\n",  # after temp1 and before temp2, as psutil sorts
        },
    )
    assert host_counters.cpu_temperature_c() == 49.0
    _write(fake_root, {hwmon.format(2, "name"): "k10temp\n", hwmon.format(2, "temp1_input"): "61250\n"})
    assert host_counters.cpu_temperature_c() == 49.0  # coretemp is asked first
    (fake_root / hwmon.format(1, "name").lstrip("/")).write_text("nvme\n")
    assert host_counters.cpu_temperature_c() == 61.25


def test_the_cpu_row_says_why_a_reading_is_missing(fake_root):
    """A container's /proc with no meminfo and no clock: the CPU's memory and clock are n/a with their reasons,
    the rest of the reading stands."""
    _write(fake_root, {"/proc/stat": "cpu  1 0 1 8 0 0 0 0 0 0\n", "/proc/cpuinfo": "processor\t: 0\n"})
    backend = CpuBackend(str(fake_root / "proc" / "cpuinfo"))
    sample = backend.sample()
    assert sample.memory_total_bytes is None and "meminfo" in sample.unavailable["memory_used_bytes"]
    assert sample.sm_clock_mhz is None and "no CPU clock" in sample.unavailable["sm_clock_mhz"]
    assert sample.temperature_c is None and sample.unavailable["temperature_c"] == "no CPU temperature sensor"
