"""The process screen (enter on a GPU process): what gpudash.actions.process_details reads of a real child
of this test (command, directory, user, threads, CPU, memory, environment with secrets redacted, tree), a
process that exited, a replayed pid (never read here), the per-process GPU history, and the screen with
Pilot on a live fake machine and on a replay."""

from __future__ import annotations

import getpass
import os
import re
import subprocess
import time

import pytest
from fakes import GONE_PID
from test_tui_monitor import DGX_H100, GIB, live_machine, ready, replay
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.actions.process_details import GONE, ProcessInspector
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.models import ProcessUsage, Sample
from gpudash.process_history import ProcessHistory
from gpudash.redaction import REDACTED_VALUE, looks_secret, redact_environment
from gpudash.render import process_details as text
from gpudash.tui.app import create_app
from gpudash.tui.screens.process_screen import ProcessScreen
from gpudash.tui.widgets.history_chart import HistoryChart
from gpudash.tui.widgets.process_table import ProcessTable

# A parent shell with one child: the tree has a descendant, the shell's argv a long command.
SCRIPT = "sleep 60 & wait  # a-long-argument-that-marks-this-command-line-" + "x" * 40


@pytest.fixture
def family(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HF_TOKEN": "hf_live_secret", "MY_SETTING": "plain"}
    proc = subprocess.Popen(["sh", "-c", SCRIPT], cwd=tmp_path, env=env)
    deadline = time.monotonic() + 10
    import psutil

    while not psutil.Process(proc.pid).children():  # the shell has started its sleep
        assert time.monotonic() < deadline, "child never started"
        time.sleep(0.02)
    yield proc
    if proc.poll() is None:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
    proc.wait()


def live_session(*pids: int) -> Session:
    return Session(defaults(), machine=live_machine(*pids))


def test_secret_looking_names_are_redacted():
    assert all(
        looks_secret(n) for n in ("HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "WANDB_API_KEY", "PGPASSWORD", "db_passwd")
    )
    assert not any(looks_secret(n) for n in ("PATH", "CUDA_VISIBLE_DEVICES", "HOME", "SLURM_JOB_ID"))
    assert redact_environment({"HF_TOKEN": "x", "PATH": "/bin"}) == {"HF_TOKEN": REDACTED_VALUE, "PATH": "/bin"}


def test_a_real_process_in_full(family, tmp_path):
    clock = iter([100.0, 101.0])
    inspector = ProcessInspector(live_session(family.pid), family.pid, clock=lambda: next(clock))
    first = inspector.read()
    assert first.exists and first.command == f"sh -c {SCRIPT}" and first.cwd == str(tmp_path)
    assert first.user == getpass.getuser() and first.threads == 1 and first.host_memory_bytes > 0
    assert first.started is not None and abs(first.started - time.time()) < 60
    assert first.cpu_pct is None and first.unavailable["cpu_pct"] == "needs a second reading"
    assert first.environment["HF_TOKEN"] == REDACTED_VALUE and first.environment["MY_SETTING"] == "plain"
    assert first.ancestors[0].pid == os.getpid() and first.ancestors[-1].pid == 1
    assert [(n.name, n.depth) for n in first.descendants] == [("sleep", 1)]
    second = inspector.read()
    assert second.cpu_pct is not None and second.cpu_pct >= 0  # measured over the clock's one second

    tree = text.tree_lines(first)
    assert tree[0].startswith("1 ") and f"{family.pid} sh  ◀ this process" in "\n".join(tree)
    assert tree[-1].strip().startswith("└─") and tree[-1].endswith(" sleep")
    assert "HF_TOKEN=<redacted>" in text.environment_lines(first) and "hf_live_secret" not in str(first)
    rows = dict(text.field_rows(first))
    assert rows["directory"] == str(tmp_path) and rows["CPU"].startswith("n/a (needs a second reading")


def test_a_process_that_exited_says_so(family):
    inspector = ProcessInspector(live_session(family.pid), family.pid)
    assert inspector.read().exists
    for child in __import__("psutil").Process(family.pid).children():
        child.kill()
    family.kill()
    family.wait()
    details = inspector.read()
    assert not details.exists and details.unavailable["all"] == GONE
    assert not ProcessInspector(live_session(GONE_PID), GONE_PID).read().exists


def test_a_replayed_pid_is_never_read_here():
    session = Session(defaults(), machine=discover(replay=str(DGX_H100), include_torch=False))
    me = os.getpid()  # a pid that exists here: its details must still not be shown as the recorded process's
    recorded = ProcessUsage(pid=me, name="python", user="alice", command="python train.py", elapsed_s=3600)
    details = ProcessInspector(session, me).read(recorded)
    assert not details.exists and details.command == "python train.py" and details.user == "alice"
    assert details.cwd is None and details.environment is None and details.ancestors == []
    assert details.unavailable["cwd"].startswith("replayed: pid details belong to dgx-h100-example")
    assert details.unavailable["environment"] == details.unavailable["cwd"]


def test_process_history_per_pid_and_device_stays_bounded():
    history = ProcessHistory(capacity=3)
    procs = [ProcessUsage(pid=7, memory_used_bytes=GIB, utilization_pct=50)]
    history.record({"nvidia:0": Sample(processes=procs), "nvidia:1": Sample(processes=[])})
    history.record({"nvidia:0": Sample(processes=[ProcessUsage(pid=7, memory_used_bytes=2 * GIB)])})
    assert history.devices_of(7) == ["nvidia:0"]
    assert history.memory(7, "nvidia:0") == [GIB, 2 * GIB] and history.utilization(7, "nvidia:0") == [50, None]
    for _ in range(3):  # gone for a whole window: forgotten
        history.record({"nvidia:0": Sample(processes=[])})
    assert len(history) == 0 and history.devices_of(7) == []


async def focus(pilot, app, widget) -> None:
    """Focus `widget` as tab would; again until it sticks (the app focuses the device table after its first
    frame, which may come later)."""

    def focused() -> bool:
        if app.focused is not widget:
            widget.focus()
            return False
        return True

    await wait_until(pilot, focused)
    await pilot.pause(0.05)
    if app.focused is not widget:
        await wait_until(pilot, focused)


async def _open(pilot, app, pid: int) -> ProcessScreen:
    table = app.query_one(ProcessTable)
    await wait_until(pilot, lambda: any(r.proc.pid == pid for r in table.shown_rows))
    table.move_to_key(next(r.key for r in table.shown_rows if r.proc.pid == pid))
    await focus(pilot, app, table)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ProcessScreen))
    screen = app.screen
    await wait_until(pilot, lambda: screen.reads >= 1)
    return screen


async def test_enter_on_a_process_opens_its_screen_and_escape_returns(family, tmp_path):
    app = create_app(live_machine(family.pid), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await _open(pilot, app, family.pid)
        await wait_until(pilot, lambda: screen.reads >= 2)  # a second reading: CPU% is measured
        fields = str(screen.query_one("#proc-fields").render())
        assert re.search(rf"^directory +{re.escape(str(tmp_path))}$", fields, re.M)
        assert "a-long-argument-that-marks-this-command-line-" + "x" * 40 in fields  # never clipped
        assert "% of one core" in fields and "resident" in fields
        env = str(screen.query_one("#proc-env").render())
        assert "HF_TOKEN=<redacted>" in env and "MY_SETTING=plain" in env and "hf_live_secret" not in env
        tree = str(screen.query_one("#proc-tree").render())
        assert f"{os.getpid()} " in tree and "◀ this process" in tree and "sleep" in tree
        charts = screen.query(HistoryChart)
        assert len(charts) == 1  # one GPU: one chart, titled with the GPU and its memory
        await wait_until(pilot, lambda: "GPU 0 · 1.0 GiB of 24.0 GiB" in screen_text(app))
        await pilot.press("e")  # the environment hides
        assert not screen.query_one("#proc-env").display
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ProcessScreen))
        assert app.focused is app.query_one(ProcessTable)


async def test_a_replayed_process_shows_what_was_recorded_and_why_the_rest_is_na():
    app = replay(DGX_H100)
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot, app)
        row = app.query_one(ProcessTable).shown_rows[0]
        screen = await _open(pilot, app, row.proc.pid)
        shown = screen_text(app)
        assert "replayed: pid details belong to dgx-h100-example" in shown
        assert (row.proc.command or "")[:30] in str(screen.query_one("#proc-fields").render())
        assert app.is_running
