"""The dashboard's health mark and the device detail's findings (issue 23, TUI), under Pilot: the fake 8-GPU NVML
in its contained child with a planted ECC fault and a remembered failure, read at `[health] read_interval_s` in
a worker (never on the UI thread: a reading that hangs leaves the dashboard answering); a replay with a lost GPU
judged once from the recorded counters, labelled replayed."""

from __future__ import annotations

import re
import sys
import threading

from fakes import load_example, make_fake_pynvml
from health_snapshots import faulty_replay
from tui_helpers import no_torch, open_detail, screen_text, wait_until, widget_text

from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.health.memory import remember
from gpudash.health.run import run_health
from gpudash.health.thresholds import Thresholds
from gpudash.tui.app import create_app
from gpudash.tui.health_watch import read_device_health
from gpudash.tui.widgets.device_detail import DeviceDetail
from gpudash.tui.widgets.device_table import DeviceTable

SIZE = (120, 40)
FAULTY = 5  # the GPU with uncorrected SRAM ECC errors


def fake_dgx(monkeypatch):
    """The 8-GPU DGX H100 example through the fake NVML, GPU 5 with 2 volatile uncorrected SRAM ECC errors."""
    devices = load_example("dgx-h100-8gpu.json")["devices"]
    devices[FAULTY] = dict(devices[FAULTY], health={"ecc": {"volatile_sram_uncorrected": 2}})
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    return discover(include_torch=False)


def config(read_interval_s: float, refresh: float = 0.1) -> dict:
    found = defaults()
    found["ui"]["refresh_interval"] = refresh
    found["health"]["read_interval_s"] = read_interval_s
    return found


def health_cell(app, key: str) -> str:
    table = app.query_one(DeviceTable)
    return table.cells_of(key)[-1].plain.strip()  # HEALTH is the last column


def screen_line(app, start: str) -> str:
    """The first line on screen that starts with `start`, or "" (the screen may not show the newest cells yet)."""
    return next((line.rstrip() for line in screen_text(app).splitlines() if line.startswith(start)), "")


def counted_readers(machine) -> list[str]:
    """Wrap each GPU's health reader so the test sees every driver request."""
    calls: list[str] = []
    for key, reader in list(machine.health_readers.items()):
        machine.health_readers[key] = lambda key=key, reader=reader: calls.append(key) or reader()
    return calls


async def test_the_faulty_gpu_is_marked_and_its_detail_names_the_fault_action_and_memory(monkeypatch):
    machine = fake_dgx(monkeypatch)
    try:
        limits = Thresholds.from_config(defaults())
        remember(machine, run_health(machine, limits))  # what an earlier `gpudash check` remembered
        app = create_app(machine, config(1.0), add_torch_view=no_torch)
        async with app.run_test(size=SIZE) as pilot:
            table = app.query_one(DeviceTable)
            await wait_until(pilot, lambda: app.health_read and table.row_keys, timeout=20)
            await wait_until(pilot, lambda: health_cell(app, f"nvidia:{FAULTY}") == "CRIT")
            for index in range(8):
                if index != FAULTY:
                    assert health_cell(app, f"nvidia:{index}") == "OK", index
            assert health_cell(app, "cpu:0") == ""  # no counter check applies to the CPU
            await wait_until(pilot, lambda: screen_line(app, f" {FAULTY} ").endswith("CRIT"))
            assert screen_line(app, " GPU NAME").endswith("HEALTH")

            await open_detail(pilot, app, f"nvidia:{FAULTY}")
            text = widget_text(app.query_one(DeviceDetail))
            assert "health: CRITICAL" in text and "the driver's counters; read every 1 s" in text
            assert "CRITICAL gpu.ecc.sram_uncorrected: volatile sram uncorrected: 2 (limit 0) -> reset_gpu" in text
            assert "this GPU failed gpu.ecc.sram_uncorrected (CRITICAL) on 20" in text and "seen 1 time" in text
            await pilot.press("right")  # the next GPU: healthy, nothing remembered
            await wait_until(pilot, lambda: app.query_one(DeviceDetail).device.key == f"nvidia:{FAULTY + 1}")
            text = widget_text(app.query_one(DeviceDetail))
            assert "health: OK" in text and "this GPU failed" not in text
    finally:
        machine.close()


async def test_health_is_read_slower_than_telemetry(monkeypatch):
    machine = fake_dgx(monkeypatch)
    calls = counted_readers(machine)
    polls = []
    try:
        app = create_app(machine, config(3600.0), add_torch_view=no_torch)
        async with app.run_test(size=SIZE) as pilot:
            app.samples_applied.subscribe(app, lambda samples: polls.append(samples))
            await wait_until(pilot, lambda: app.health_watch.readings == 1 and len(polls) >= 5, timeout=30)
            assert len(calls) == 8  # one request per GPU, once, while the telemetry was read 5 times and more
            assert app.health_watch.readings == 1
        app = create_app(machine, config(1.0), add_torch_view=no_torch)
        async with app.run_test(size=SIZE) as pilot:  # at 1 s a second reading comes by itself
            await wait_until(pilot, lambda: app.health_watch.readings >= 2, timeout=30)
    finally:
        machine.close()


async def test_a_health_reading_that_hangs_never_blocks_the_dashboard(monkeypatch):
    machine = fake_dgx(monkeypatch)
    gate, entered = threading.Event(), threading.Event()

    def stuck(session: Session, found):
        entered.set()
        gate.wait(30)  # a driver call that hangs, until the test lets it go
        return read_device_health(session, found)

    polls = []
    try:
        app = create_app(machine, config(3600.0), add_torch_view=no_torch)
        app.health_watch.reader = stuck
        async with app.run_test(size=SIZE) as pilot:
            app.samples_applied.subscribe(app, lambda samples: polls.append(samples))
            await wait_until(pilot, entered.is_set, timeout=20)
            seen = len(polls)
            await wait_until(pilot, lambda: len(polls) >= seen + 3, timeout=30)  # telemetry goes on
            await pilot.press("p")  # and keys are answered
            assert app.paused
            await pilot.press("p")
            assert not app.health_read and health_cell(app, f"nvidia:{FAULTY}") == ""
            gate.set()
            await wait_until(pilot, lambda: health_cell(app, f"nvidia:{FAULTY}") == "CRIT", timeout=20)
    finally:
        gate.set()
        machine.close()


async def test_a_replay_with_a_lost_gpu_marks_it_and_judges_the_recorded_counters_once(tmp_path):
    machine = discover(replay=str(faulty_replay(tmp_path)), include_torch=False)
    app = create_app(machine, config(1.0), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(DeviceTable)
        await wait_until(pilot, lambda: app.health_read and app.latest and table.row_keys)
        await wait_until(pilot, lambda: health_cell(app, "nvidia:3") == "CRIT")
        assert health_cell(app, "nvidia:5") == "CRIT" and health_cell(app, "nvidia:0") == "OK"
        await wait_until(pilot, lambda: screen_line(app, " 3 ").endswith("CRIT"))
        assert "LOST" in screen_line(app, " 3 ")

        await open_detail(pilot, app, "nvidia:5")
        text = widget_text(app.query_one(DeviceDetail))
        assert "health: CRITICAL" in text and "replayed: the counters the snapshot recorded" in text
        assert "read every" not in text  # a recording does not change: judged once
        assert "CRITICAL gpu.ecc.sram_uncorrected: volatile sram uncorrected: 3 (limit 0) -> reset_gpu" in text
        await pilot.press("escape")
        await open_detail(pilot, app, "nvidia:3")
        text = widget_text(app.query_one(DeviceDetail))
        assert "CRITICAL gpu.lost: GPU lost: GpuIsLost: the GPU has fallen off the bus -> reboot" in text
        await pilot.press("escape")
        await open_detail(pilot, app, "nvidia:0")
        assert "replayed: no counters recorded, reachability only" in widget_text(app.query_one(DeviceDetail))
        assert app.health_watch.readings == 1


# The Checks view ------------------------------------------------------------------------------


def assert_grouped(view, machine) -> None:
    """Each device's lines together, worst first, its not-applicable checks on one line at its end."""
    order = ["host", *(d.key for d in machine.devices)]
    devices = list(dict.fromkeys(line.device for line in view.lines))
    assert devices == [d for d in order if d in devices]
    rank = {"CRITICAL": 0, "WARN": 1, "UNKNOWN": 2, "OK": 3, None: 4}
    for device in devices:
        mine = [line for line in view.lines if line.device == device]
        assert [rank[line.severity] for line in mine] == sorted(rank[line.severity] for line in mine), device
        assert sum(line.severity is None for line in mine) <= 1, device
    results = len(view.results) + len(view.health)
    assert sum(len(line.results) for line in view.lines) == results  # every result is behind one line


async def run_checks_view(pilot, app):
    from gpudash.tui.screens.checks_view import ChecksView

    await pilot.press("c")
    await wait_until(pilot, lambda: app.query(ChecksView) and not app.query_one(ChecksView).running, timeout=120)
    view = app.query_one(ChecksView)
    await wait_until(pilot, lambda: app.query_one("#checks-table").row_count == len(view.lines))
    return view


async def test_the_checks_view_groups_the_fake_dgx_by_device_and_severity_and_folds_its_skips(monkeypatch):
    """The issue's DGX: every ROCm check skips on its 8 NVIDIA GPUs; they fold into one line per device, beside
    the health checks, GPU 5's ECC fault first on its device with its action."""
    from textual.widgets import Static

    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    machine = fake_dgx(monkeypatch)
    try:
        app = create_app(machine, config(3600.0), add_torch_view=no_torch)
        async with app.run_test(size=(160, 60)) as pilot:
            view = await run_checks_view(pilot, app)
            skipped = [r for r in view.results if r.status == "skip"]
            assert len(skipped) >= 8 * 8  # the ROCm checks, on every GPU
            assert_grouped(view, machine)
            folded = [line for line in view.lines if line.severity is None]
            assert {line.device for line in folded} >= {f"nvidia:{i}" for i in range(8)}
            assert len(view.lines) < len(view.results) + len(view.health)
            fault = next(line for line in view.lines if line.device == f"nvidia:{FAULTY}")
            assert (fault.severity, fault.name, fault.action) == ("CRITICAL", "gpu.ecc.sram_uncorrected", "reset_gpu")
            await wait_until(
                pilot,
                lambda: re.search(
                    r"nvidia:5 +CRITICAL +gpu\.ecc\.sram_uncorrected +reset_gpu +volatile sram uncorrected: 2",
                    screen_text(app),
                ),
            )
            status = str(app.query_one("#checks-status", Static).render())
            unapplied = len(skipped) + sum(h.severity is None for h in view.health)
            assert f"1 CRITICAL, {len(view.results) + len(view.health) - 1 - unapplied} OK, {unapplied} not" in status

            table = app.query_one("#checks-table")
            table.focus()
            table.move_cursor(row=view.lines.index(fault))
            await wait_until(
                pilot, lambda: "action: reset_gpu" in str(app.query_one("#checks-detail", Static).render())
            )
            detail = str(app.query_one("#checks-detail", Static).render())
            assert "gpu.ecc.sram_uncorrected on nvidia:5: CRITICAL" in detail and "evidence: " in detail
            gpu0 = next(line for line in folded if line.device == "nvidia:0")
            table.move_cursor(row=view.lines.index(gpu0))
            await wait_until(
                pilot, lambda: "do not apply here" in str(app.query_one("#checks-detail", Static).render())
            )
            assert f"nvidia:0: {len(gpu0.results)} checks do not apply here" in str(
                app.query_one("#checks-detail", Static).render()
            )
            rocm = [r for r in gpu0.results if getattr(r, "plugin", None) == "rocm_checks"]
            assert rocm and all(r.status == "skip" for r in rocm)  # the ROCm checks skip on an NVIDIA GPU
            assert all(r.severity is None for r in gpu0.results if r not in rocm)  # NVML NotSupported counters
            passed = next(line for line in view.lines if line.device == "nvidia:0" and line.severity == "OK")
            assert passed.name == f"({len(passed.results)} passed)" and len(passed.results) >= 12
    finally:
        machine.close()


async def test_the_checks_view_of_a_replay_with_a_lost_gpu(tmp_path):
    machine = discover(replay=str(faulty_replay(tmp_path)), include_torch=False)
    app = create_app(machine, config(1.0), add_torch_view=no_torch)
    async with app.run_test(size=(160, 60)) as pilot:
        view = await run_checks_view(pilot, app)
        assert_grouped(view, machine)
        first = view.lines[0]
        assert (first.device, first.severity, first.name) == ("host", "CRITICAL", "gpu.count")
        lost = next(line for line in view.lines if line.device == "nvidia:3")
        assert (lost.severity, lost.name, lost.action) == ("CRITICAL", "gpu.lost", "reboot")
        ecc = next(line for line in view.lines if line.device == "nvidia:5")
        assert (ecc.severity, ecc.name, ecc.action) == ("CRITICAL", "gpu.ecc.sram_uncorrected", "reset_gpu")
        await wait_until(
            pilot, lambda: any("gpu.lost" in line and "reboot" in line for line in screen_text(app).splitlines())
        )
