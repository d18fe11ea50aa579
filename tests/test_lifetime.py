"""No child outlives gpudash: whether it ends normally, by SIGTERM, SIGHUP, Ctrl-C or SIGKILL, the child that
runs a plugin check and the 50 processes that check started are gone within seconds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gpudash.devices import discover
from gpudash.plugin_manager import make_plugin_manager, run_checks

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "plugin_samples" / "hostile"
GPUDASH = str(Path(sys.executable).parent / "gpudash")
GONE_WITHIN_S = 5.0


def environment(tmp_path, **extra):
    env = dict(os.environ)
    env.update(
        GPUDASH_LOAD_PLUGINS="spawns_sleepers",
        GPUDASH_TEST_PID_FILE=str(tmp_path / "pids"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        **extra,
    )
    return env


def wait_for_pids(pid_file: Path, proc: subprocess.Popen | None = None, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid_file.exists():
            return [int(line) for line in pid_file.read_text().split()]
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"gpudash ended before the check started: {proc.stderr.read()}")
        time.sleep(0.05)
    pytest.fail("the check never wrote its pids")


def running(pids: list[int]) -> list[int]:
    """The pids that still run (a zombie waiting for its parent to reap it runs nothing)."""
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def in_group(pgid: int) -> list[int]:
    """Every running process of the group: also catches the child's watcher, whose pid no file records."""
    found = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(proc.info["pid"]) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc.info["pid"])
        except (ProcessLookupError, PermissionError):
            pass
    return found


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline and (running(pids) or in_group(pids[0])):
        time.sleep(0.05)
    assert running(pids) == [] and in_group(pids[0]) == []


@pytest.fixture
def kill_leftovers():
    """Should a test fail, leave no sleepers behind for the rest of the suite."""
    started: list[int] = []
    yield started
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize(
    "signum, code, line",
    [
        (signal.SIGTERM, 143, "gpudash: terminated by SIGTERM"),
        (signal.SIGHUP, 129, "gpudash: terminated by SIGHUP"),
        (signal.SIGINT, 130, "gpudash: interrupted"),
    ],
)
def test_a_signal_to_gpudash_ends_it_with_one_line_and_ends_all_it_started(
    tmp_path, kill_leftovers, signum, code, line
):
    args = [sys.executable, "-m", "gpudash", "--plugins-dir", str(HOSTILE), "check", "--timeout", "300"]
    proc = subprocess.Popen(args, env=environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = wait_for_pids(tmp_path / "pids", proc)
    kill_leftovers.extend(pids)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=GONE_WITHIN_S)
    assert proc.returncode == code
    assert err.strip().splitlines() == [line] and out == ""
    assert_all_gone(pids)


def test_sigkill_of_gpudash_still_ends_the_child_and_its_processes(tmp_path, kill_leftovers):
    args = [GPUDASH, "--plugins-dir", str(HOSTILE), "check", "--timeout", "300"]
    proc = subprocess.Popen(args, env=environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pids = wait_for_pids(tmp_path / "pids", proc)
    kill_leftovers.extend(pids)
    proc.kill()
    proc.communicate(timeout=GONE_WITHIN_S)
    assert proc.returncode == -signal.SIGKILL
    assert_all_gone(pids)


def test_what_a_check_leaves_running_ends_with_its_child(tmp_path, monkeypatch, kill_leftovers, no_vendor_libs):
    for name, value in environment(tmp_path, GPUDASH_TEST_RETURN="1").items():
        monkeypatch.setenv(name, value)
    pm = make_plugin_manager([HOSTILE], load_entry_points=False)
    [result] = run_checks(discover(include_torch=False), pm)
    assert result.status == "pass", result.summary
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    kill_leftovers.extend(pids)
    assert_all_gone(pids)  # the runner ended the group (SIGKILL is asynchronous: allow the kernel its moment)


def test_sigterm_to_the_dashboard_gives_the_terminal_back_then_says_why(tmp_path):
    import pty
    import select

    snapshot = HERE.parent / "examples" / "snapshots" / "h100-80gb.json"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard on a terminal of its own
        os.environ.update(environment(tmp_path), TERM="xterm-256color")
        os.execv(sys.executable, [sys.executable, "-m", "gpudash", "--replay", str(snapshot)])
    out = b""

    def read_for(seconds: float, until: bytes | None = None) -> None:
        nonlocal out
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until in out):
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the other side closed
                    return
                if not chunk:
                    return
                out += chunk

    try:
        read_for(30, until=b"H100")  # the first frame is up
        assert b"H100" in out
        os.kill(pid, signal.SIGTERM)
        read_for(GONE_WITHIN_S + 5)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 143
    restored = out.rfind(b"\x1b[?1049l")  # left the alternate screen
    assert 0 <= restored < out.find(b"gpudash: terminated by SIGTERM")
    assert out.rstrip().endswith(b"gpudash: terminated by SIGTERM"), out[-3000:].decode(errors="replace")


@pytest.mark.parametrize(
    "first_to_notice",
    [
        "the terminal watch",
        # An error in the app can come before the watch's poll (Textual then ends it with exit code 1); an exit 1
        # was seen once beside a second copy of the suite. Planted by tests/dashboard_faults.py, every time.
        "an error",
    ],
)
def test_the_dashboard_ends_when_its_terminal_goes_away_without_a_sighup(tmp_path, first_to_notice):
    """A dashboard that is not its terminal's session (setsid, a supervisor's pseudo-terminal) gets no SIGHUP
    when the terminal closes; Textual's input thread would then spin at a whole core for ever. It must end, and
    say the terminal went away (129, as for SIGHUP) whatever noticed first."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    snapshot = HERE.parent / "examples" / "snapshots" / "h100-80gb.json"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**environment(tmp_path), "TERM": "xterm-256color"}
    start = ["-m", "gpudash"] if first_to_notice == "the terminal watch" else [str(HERE / "dashboard_faults.py")]
    command = [sys.executable, *start, "--replay", str(snapshot)]
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    out = b""
    try:
        deadline = time.monotonic() + 30
        while b"H100" not in out and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                out += os.read(master, 65536)
        assert b"H100" in out  # the first frame is up: the dashboard runs on a healthy terminal
        assert proc.poll() is None
    finally:
        os.close(master)  # the terminal goes away; no SIGHUP reaches a process of another session
    try:
        assert proc.wait(timeout=GONE_WITHIN_S) == 129  # as for SIGHUP
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
