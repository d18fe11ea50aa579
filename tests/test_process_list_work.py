"""The process list's work beyond kill: the tree view (pure order, real ancestry, Pilot), SIGINT, tagging
several real children and signalling them after one confirmation, sideways scroll of a long command, and the
refusals on a replay and with --readonly."""

from __future__ import annotations

import getpass
import os
import signal
import subprocess
import time

import psutil
import pytest
from test_process_screen import focus
from test_tui_monitor import DGX_H100, GIB, notes, ready, replay
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.actions.processes import ProcessAncestry
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.models import DeviceInfo, Host, ProcessUsage, Runtime, Sample
from gpudash.render import processes as proc_text
from gpudash.tui.app import create_app
from gpudash.tui.screens.signal_dialog import SignalDialog
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.process_table import ProcessTable


def _row(pid: int, gpu: str = "0", name: str = "python") -> proc_text.ProcessRow:
    return proc_text.ProcessRow(f"nvidia:{gpu}", gpu, (int(gpu), -1), ProcessUsage(pid=pid, name=name))


def test_tree_groups_a_launchers_workers_and_nests_a_gpu_child_under_its_gpu_parent():
    rows = [_row(11, "0"), _row(12, "1"), _row(13, "2"), _row(20, "3"), _row(30, "0")]
    ancestry = {
        11: [(10, "torchrun"), (5, "bash")],
        12: [(10, "torchrun"), (5, "bash")],
        13: [(12, "python"), (10, "torchrun")],  # a worker's own GPU child
        20: [(5, "bash")],  # alone under bash: no group for one child
        # 30: not visible here (another namespace): a root
    }
    entries = proc_text.tree_entries(rows, ancestry)
    drawn = [(e.pid, e.prefix, e.row is None) for e in entries]
    assert drawn == [
        (10, "", True),
        (11, "├─ ", False),
        (12, "└─ ", False),
        (13, "   └─ ", False),
        (20, "", False),
        (30, "", False),
    ]
    assert proc_text.tree_cells(entries[0])[-1] == "torchrun (no GPU)"
    assert proc_text.tree_cells(entries[3])[-1] == "   └─ python"  # no command: its name, under its parent


def test_a_process_on_two_gpus_keeps_both_rows_in_the_tree():
    rows = [_row(11, "0"), _row(11, "1"), _row(12, "2")]
    entries = proc_text.tree_entries(rows, {12: [(11, "python")]})
    assert [(e.key, e.prefix) for e in entries] == [("11@0", ""), ("11@1", ""), ("12@2", "└─ ")]


@pytest.fixture
def launcher():
    """A shell with two sleeping children, as a launcher with two workers."""
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"])
    parent = psutil.Process(proc.pid)
    workers: list[psutil.Process] = []

    def started() -> bool:
        workers[:] = [c for c in parent.children() if c.name() == "sleep"]
        return len(workers) == 2

    deadline = time.monotonic() + 10
    while not started():
        assert time.monotonic() < deadline, "workers never started"
        time.sleep(0.02)
    yield proc, sorted(w.pid for w in workers)
    for worker in workers:
        try:
            worker.kill()
        except psutil.NoSuchProcess:
            pass
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def gpu_machine(*pids: int, command: str = "sleep 60") -> Machine:
    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA L4", compute_capability="8.9", sources=["nvml"])

    def sample() -> Sample:
        procs = [
            ProcessUsage(pid=p, name="sleep", type="C", user=getpass.getuser(), command=command, memory_used_bytes=GIB)
            for p in pids
        ]
        return Sample(memory_used_bytes=GIB, memory_total_bytes=24 * GIB, utilization_pct=10, processes=procs)

    return Machine(host=Host(hostname="testbox"), runtime=Runtime(), devices=[gpu], samplers={gpu.key: sample})


async def live_ready(pilot, app, rows: int) -> None:
    """The rows are listed and the app's first focus (the device table, after the first frame) is done:
    the dashboard's keys go to it from now on."""
    table = app.query_one(ProcessTable)
    await wait_until(pilot, lambda: len(table.shown_rows) == rows and isinstance(app.focused, DeviceTable))


def test_ancestry_of_real_processes_and_refused_on_a_replay(launcher):
    proc, workers = launcher
    ancestry = ProcessAncestry(Session(defaults(), machine=gpu_machine(*workers))).of(workers + [2**22 + 12345])
    assert set(ancestry) == set(workers)  # the pid nobody has is left out
    assert all(chain[0] == (proc.pid, "sh") and chain[1][0] == os.getpid() for chain in ancestry.values())
    replayed = ProcessAncestry(Session(defaults(), machine=discover(replay=str(DGX_H100), include_torch=False)))
    assert replayed.refused and replayed.of([os.getpid()]) == {}


async def test_t_shows_the_tree_with_the_launcher_and_t_again_the_list(launcher):
    proc, workers = launcher
    app = create_app(gpu_machine(*workers), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(ProcessTable)
        await live_ready(pilot, app, 2)
        await pilot.press("t")
        await wait_until(pilot, lambda: f"{proc.pid}@tree" in table.row_keys)
        assert table.row_keys == [f"{proc.pid}@tree", f"{workers[0]}@0", f"{workers[1]}@0"]
        shown = screen_text(app)
        assert "sh (no GPU)" in shown and "├─ sleep 60" in shown and "└─ sleep 60" in shown
        table.move_to_key(f"{proc.pid}@tree")  # the launcher is not a GPU process: nothing to signal
        await pilot.press("T")
        await wait_until(pilot, lambda: any("no process highlighted" in m for m in notes(app)))
        await pilot.press("t")
        await wait_until(pilot, lambda: f"{proc.pid}@tree" not in table.row_keys)
        assert len(table.row_keys) == 2


async def test_sigint_after_confirmation():
    # A direct child: a non-interactive shell's background jobs ignore SIGINT, as POSIX has them.
    child = subprocess.Popen(["sleep", "60"])
    try:
        app = create_app(gpu_machine(child.pid), defaults(), add_torch_view=no_torch)
        async with app.run_test(size=(100, 30)) as pilot:
            await live_ready(pilot, app, 1)
            await pilot.press("I")
            await wait_until(pilot, lambda: isinstance(app.screen, SignalDialog))
            assert "as ctrl+c would" in screen_text(app)
            await pilot.press("y")
            assert child.wait(timeout=10) == -signal.SIGINT
            await wait_until(pilot, lambda: f"SIGINT sent to pid {child.pid}" in notes(app))
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def _zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_tagged_processes_get_one_confirmation_and_the_signal_together(launcher):
    proc, workers = launcher
    app = create_app(gpu_machine(*workers), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(ProcessTable)
        await live_ready(pilot, app, 2)
        table.move_to_key(table.row_keys[0])
        await pilot.press("space")  # tags, then steps to the next row
        await pilot.press("space")
        await wait_until(pilot, lambda: table.tagged == set(workers))
        assert "2 tagged: I/T/K signal them together" in screen_text(app)
        assert all(table.cells_of(k)[0].plain.strip().startswith("*") for k in table.row_keys)
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, SignalDialog))
        assert "Send SIGTERM to 2 tagged processes?" in screen_text(app)
        assert all(f"pid {pid} (sleep" in screen_text(app) for pid in workers)
        await pilot.press("y")
        for pid in workers:
            await wait_until(pilot, lambda pid=pid: _zombie(pid))
        await wait_until(pilot, lambda: "SIGTERM sent to 2 of 2 tagged processes" in notes(app))
        assert table.tagged == set() and proc.wait(timeout=10) == 0  # the launcher was not signalled: its wait ended


async def test_tagging_is_refused_on_a_replay_and_with_readonly(launcher):
    _, workers = launcher
    app = replay(DGX_H100)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("space")
        await wait_until(pilot, lambda: any(m.startswith("not tagged: replayed") for m in notes(app)))
        assert app.query_one(ProcessTable).tagged == set()
        await pilot.press("t")  # the recorded machine's process tree was not recorded
        await wait_until(pilot, lambda: any(m.startswith("tree view off: replayed") for m in notes(app)))
    app = create_app(gpu_machine(*workers), defaults(), add_torch_view=no_torch, readonly=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await live_ready(pilot, app, 2)
        await pilot.press("space")
        await wait_until(pilot, lambda: any(m.startswith("not tagged: read-only") for m in notes(app)))
        await pilot.press("I")
        await wait_until(pilot, lambda: any(m.startswith("SIGINT not sent: read-only") for m in notes(app)))
        assert not isinstance(app.screen, SignalDialog) and all(psutil.pid_exists(p) for p in workers)


async def test_left_and_right_scroll_a_long_command_sideways(launcher):
    _, workers = launcher
    command = "python train.py " + " ".join(f"--option-{i}=value-{i}" for i in range(12)) + " --the-end"
    app = create_app(gpu_machine(workers[0], command=command), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(ProcessTable)
        await live_ready(pilot, app, 1)
        await focus(pilot, app, table)
        assert "--the-end" not in screen_text(app)  # cut at 80 columns
        for _ in range(40):  # far past the end: stops where the command's end shows
            await pilot.press("right")
        await wait_until(pilot, lambda: "--the-end" in screen_text(app))
        assert table.command_offset > 0 and f"COMMAND +{table.command_offset}" in screen_text(app)
        assert table.cells_of(table.row_keys[0])[-1].plain.strip().startswith("…")
        for _ in range(40):
            await pilot.press("left")
        await wait_until(pilot, lambda: table.command_offset == 0)
        assert "python train.py" in screen_text(app)


def test_the_signals_are_sigint_sigterm_sigkill():
    from gpudash.actions.processes import SIGNALS

    assert SIGNALS == {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
