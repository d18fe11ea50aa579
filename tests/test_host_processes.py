"""The host side of a GPU process (psutil): what nvitop shows next to NVML's pid and memory."""

import subprocess
import sys
import time

from fakes import GONE_PID

from gpudash.devices.host_processes import CPU_FIRST_READING, HostProcesses
from gpudash.models import PROCESS_NOT_VISIBLE, ProcessUsage


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def burn_cpu(seconds: float) -> None:
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


def test_cpu_share_needs_two_readings_then_is_measured():
    import os

    clock = Clock()
    host = HostProcesses(clock=clock)
    first = ProcessUsage(pid=os.getpid())
    host.fill(first)
    assert first.cpu_pct is None and first.unavailable["cpu_pct"] == CPU_FIRST_READING
    burn_cpu(0.05)
    clock.now += 1.0
    second = ProcessUsage(pid=os.getpid())
    host.fill(second)
    assert second.cpu_pct is not None and second.cpu_pct >= 4.0  # >= 0.05 s of CPU in 1 s of wall time
    assert "cpu_pct" not in second.unavailable
    # The same pid on a second GPU in the same round: the figure is reused, not divided by microseconds.
    clock.now += 0.01
    again = ProcessUsage(pid=os.getpid())
    host.fill(again)
    assert again.cpu_pct == second.cpu_pct


def test_a_child_process_then_its_exit():
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)"], stdout=subprocess.PIPE
    )
    try:
        assert child.stdout.readline() == b"up\n"  # running its own code, not still in exec
        host = HostProcesses()
        proc = ProcessUsage(pid=child.pid, memory_used_bytes=123)
        host.fill(proc)
        assert proc.command.endswith("time.sleep(30)")
        assert proc.user and proc.host_memory_bytes > 0 and proc.elapsed_s >= 0
    finally:
        child.kill()
        child.wait()
    after = ProcessUsage(pid=child.pid, memory_used_bytes=123)
    host.fill(after)
    assert after.memory_used_bytes == 123 and after.command is None
    assert after.unavailable["host_memory_bytes"] == PROCESS_NOT_VISIBLE


def test_a_pid_nobody_has():
    proc = ProcessUsage(pid=GONE_PID, name="from-the-driver")
    HostProcesses().fill(proc)
    assert proc.name == "from-the-driver"  # a driver-given name is kept
    assert {proc.user, proc.command, proc.cpu_pct, proc.host_memory_bytes, proc.elapsed_s} == {None}
    assert proc.unavailable["elapsed_s"] == PROCESS_NOT_VISIBLE


def test_pids_not_asked_about_are_forgotten():
    import os

    clock = Clock()
    host = HostProcesses(clock=clock)
    host.fill(ProcessUsage(pid=os.getpid()))
    assert len(host) == 1
    clock.now += 120
    host.fill(ProcessUsage(pid=GONE_PID))
    assert len(host) == 0


def test_a_command_line_read_too_early_is_read_again():
    """Right after exec Linux can show an empty command line; the next reading fills it in."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        host = HostProcesses()
        first = ProcessUsage(pid=child.pid)
        host.fill(first)
        deadline = time.monotonic() + 10
        while True:
            later = ProcessUsage(pid=child.pid)
            host.fill(later)
            if later.command or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        assert later.command and later.command.endswith("time.sleep(30)")
        assert "command" not in later.unavailable
    finally:
        child.kill()
        child.wait()
