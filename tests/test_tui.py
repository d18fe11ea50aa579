"""The dashboard as a user sees it, driven by Textual's Pilot on fake or replayed machines.

The dashboard is dense (one line per device; tests/test_tui_monitor.py covers it at 80x24 and 160x48); a
device's card, with its gauges, badges, n/a reasons and chart, is its detail, opened with enter on its row.

No test here imports real torch: the torch step is replaced by a fake (the real one is the same
worker calling devices.add_torch_view after `import torch`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from tui_helpers import no_torch, open_detail, screen_text, wait_until, widget_text

from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.models import DeviceInfo, Host, ProcessUsage, Runtime, Sample
from gpudash.render.monitor import short_cpu_name
from gpudash.tui import views
from gpudash.tui.app import create_app
from gpudash.tui.screens.help import HelpScreen
from gpudash.tui.widgets import DeviceCard, Gauge, PrecisionBadges
from gpudash.tui.widgets.device_detail import DeviceDetail
from gpudash.tui.widgets.device_table import DeviceTable

EXAMPLE_H100 = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "h100-80gb.json"
SIZE = (140, 45)
GIB = 1024**3


def fast_config(interval: float = 0.1) -> dict:
    config = defaults()
    config["ui"]["refresh_interval"] = interval
    return config


def gpu(name="NVIDIA GeForce RTX 3060", index=0, cc="8.6") -> DeviceInfo:
    return DeviceInfo(
        vendor="nvidia",
        index=index,
        name=name,
        compute_capability=cc,
        memory_total_bytes=12 * GIB,
        driver_version="550.54.15",
        sources=["nvml"],
    )


def machine_of(devices: list[DeviceInfo], sample: Sample, cls=Machine) -> Machine:
    return cls(
        host=Host(hostname="testbox"),
        runtime=Runtime(driver="550.54.15"),
        devices=devices,
        samplers={
            d.key: (lambda: Sample(**{**sample.__dict__, "unavailable": dict(sample.unavailable)})) for d in devices
        },
    )


@pytest.fixture
def h100_path(tmp_path) -> Path:
    if EXAMPLE_H100.is_file():
        return EXAMPLE_H100
    import json

    from conftest import H100, snapshot_dict  # the minimal snapshot the other tests use

    path = tmp_path / "h100-80gb.json"
    path.write_text(json.dumps(snapshot_dict(H100)))
    return path


async def test_replayed_h100_card_shows_identity_badges_and_says_replayed(h100_path):
    app = create_app(discover(replay=str(h100_path), include_torch=False), fast_config())
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "H100 80GB HBM3" in text and "fp8" in text  # the dense row, with its precision mark
        assert "replayed" in app.sub_title and "replayed from h100-80gb.json" in text
        await open_detail(pilot, app, "nvidia:0")
        text = screen_text(app)
        assert "Hopper" in text and "cc 9.0" in text
        badges = app.query_one(PrecisionBadges)
        assert badges.levels["bf16"] == "native" and badges.levels["fp8"] == "native"
        assert "● bf16" in text and "● fp8" in text
        assert app.torch_state == "skipped"  # a replayed machine never loads torch


async def test_live_cpu_card_shows_name_memory_and_utilization_updates(no_vendor_libs):
    machine = discover(include_torch=False)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    app = create_app(machine, fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        row = app.query_one(DeviceTable).cells_of(cpu.key)
        assert row[0].plain.strip() == "cpu" and short_cpu_name(cpu.name)[:8] in row[1].plain
        await open_detail(pilot, app, cpu.key)
        card = app.query_one(DeviceCard)
        util = card.query_one("#util", Gauge)
        # A reading right after discovery has no CPU load yet (n/a: too short a window); the next one has.
        await wait_until(
            pilot, lambda: card.sample is not None and card.sample.utilization_pct is not None, timeout=5.0
        )
        first = card.sample
        assert util.fraction is not None and util.text == f"{first.utilization_pct:.0f}%"
        assert "GiB" in card.query_one("#memory", Gauge).text
        text = screen_text(app)
        assert cpu.name[:20] in text and "CPU 0" in text  # the detail names the CPU as the OS does
        # The next poll brings a new reading, and the gauge follows it.
        await wait_until(pilot, lambda: card.sample is not first, timeout=5.0)
        assert util.text == f"{card.sample.utilization_pct:.0f}%"
        assert len(app.history) >= 2


async def test_help_lists_bindings_and_q_quits():
    app = create_app(machine_of([gpu()], Sample(utilization_pct=5)), fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        assert isinstance(app.screen, HelpScreen)
        assert "quit gpudash" in screen_text(app)  # the first lines are on screen; the rest scrolls
        text = widget_text(app.screen)
        for expected in ("quit gpudash", "pause or resume", "Dashboard", "native", "emulated", "absent"):
            assert expected in text
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
        await pilot.pause(0.1)
        assert not app.is_running
    assert app.return_code == 0


class SlowMachine(Machine):
    """sample_all takes longer than the refresh interval; records how many calls ever overlapped."""

    def sample_all(self):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        time.sleep(0.25)
        with self.lock:
            self.active -= 1
            self.calls += 1
        return super().sample_all()


async def test_polls_never_overlap_even_when_sampling_is_slower_than_the_interval():
    machine = machine_of([gpu()], Sample(utilization_pct=50), cls=SlowMachine)
    machine.lock, machine.active, machine.max_active, machine.calls = threading.Lock(), 0, 0, 0
    app = create_app(machine, fast_config(0.1), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: machine.calls >= 4, timeout=10)
    assert machine.max_active == 1


async def test_unavailable_fields_show_na_and_their_reason():
    sample = Sample(
        memory_used_bytes=GIB,
        utilization_pct=10,
        sm_clock_mhz=1500,
        unavailable={"power_w": "NotSupported", "temperature_c": "sensor read failed"},
    )
    app = create_app(machine_of([gpu()], sample), fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        await pilot.pause(0.05)
        row = [c.plain.strip() for c in app.query_one(DeviceTable).cells_of("nvidia:0")]
        assert row[4:6] == ["n/a", "n/a"]  # temp and power: n/a in the dense row, the reasons in the detail
        await open_detail(pilot, app, "nvidia:0")
        card = app.query_one(DeviceCard)
        await wait_until(pilot, lambda: card.sample is not None, timeout=5.0)
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "power n/a" in text and "temp n/a" in text and "clock 1500 MHz" in text
        assert "power: NotSupported" in text and "temp: sensor read failed" in text  # readable without a mouse
        tooltip = str(card.query_one(".readings").tooltip)  # and on hover
        assert "power: NotSupported" in tooltip and "temp: sensor read failed" in tooltip
        # A field with no reason recorded still says where it was looked for.
        assert "mem clock n/a" in text and "mem clock: not reported by nvml" in tooltip


async def test_gpu_card_lists_its_processes_and_says_when_it_cannot():
    procs = [ProcessUsage(pid=22, name="train", memory_used_bytes=8 * GIB), ProcessUsage(pid=11, name="nb")]
    machine = machine_of(
        [gpu(), gpu(name="NVIDIA A100", index=1, cc="8.0")], Sample(utilization_pct=50, processes=procs)
    )
    no_list = Sample(
        memory_used_bytes=GIB,
        utilization_pct=5,
        temperature_c=40,
        power_w=90,
        sm_clock_mhz=1400,
        memory_clock_mhz=7000,
        unavailable={"processes": "NotSupported"},
    )
    machine.samplers["nvidia:1"] = lambda: no_list
    app = create_app(machine, fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.latest, timeout=5.0)
        await pilot.pause(0.05)
        assert "processes n/a on GPU 1: NotSupported" in screen_text(app)  # the process panel's note
        await open_detail(pilot, app, "nvidia:0")
        assert "procs train[22] 8.0 GiB · nb[11] n/a" in screen_text(app)
        await pilot.press("right")  # the next device's detail
        await wait_until(pilot, lambda: app.query_one(DeviceDetail).device.key == "nvidia:1")
        await wait_until(pilot, lambda: "n/a — procs: NotSupported" in screen_text(app))
        assert "procs n/a" in screen_text(app)


async def test_torch_view_and_view_keys_while_help_is_open():
    # On a GPU machine torch's view can land while the user reads the help screen.
    release = threading.Event()

    def late_torch_view(machine: Machine) -> None:
        release.wait(10)
        machine.runtime.torch = "9.9.9"

    app = create_app(machine_of([gpu()], Sample(utilization_pct=5)), fast_config(), add_torch_view=late_torch_view)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        release.set()
        await wait_until(pilot, lambda: app.torch_state == "ready", timeout=5.0)
        assert isinstance(app.screen, HelpScreen) and app.is_running
        app.action_show_view("plugins")  # e.g. from the command palette: switches the tab underneath
        await pilot.pause(0.1)
        assert app.screen_stack[0].query_one("#views").active == "view-plugins"
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert "torch 9.9.9" in screen_text(app)


async def test_a_view_key_sticks_when_a_focus_in_the_old_view_is_still_on_its_way():
    """A focus asked for just before a view key (the dashboard's first focus when `c` comes right after the
    start) must not take the tabs back: Textual learns of a focus several messages late and shows its pane."""
    app = create_app(machine_of([gpu()], Sample(utilization_pct=1)), fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        tabs = app.query_one("#views")
        dashboard = tabs.get_pane("view-dashboard")
        await wait_until(pilot, lambda: isinstance(app.focused, DeviceTable), timeout=5.0)
        other = next(w for w in dashboard.query("*") if w.focusable and not isinstance(w, DeviceTable))
        other.focus()  # on its way, not yet landed
        app.action_show_view("plugins")
        plugins = tabs.get_pane("view-plugins")
        await wait_until(pilot, lambda: app.focused is not None and plugins in app.focused.ancestors, timeout=5.0)
        await pilot.pause(0.1)
        assert tabs.active == "view-plugins"
        assert app.focused is not None and plugins in app.focused.ancestors
        # b then c, typed fast: the Benchmarks view, built when first shown, focuses its table as it mounts.
        app.action_show_view("bench")
        app.action_show_view("checks")
        checks = tabs.get_pane("view-checks")
        await wait_until(pilot, lambda: app.query("#bench-table"), timeout=5.0)
        await wait_until(pilot, lambda: app.focused is not None and checks in app.focused.ancestors, timeout=5.0)
        await pilot.pause(0.1)
        assert tabs.active == "view-checks"


async def test_first_frame_does_not_wait_for_torch_and_torch_view_refreshes_cards():
    release = threading.Event()

    def slow_torch_view(machine: Machine) -> None:  # what add_torch_view does, minus the real torch
        release.wait(10)
        machine.runtime.torch, machine.runtime.cuda = "9.9.9", "12.4"
        machine.devices.insert(0, gpu(name="NVIDIA H100 80GB HBM3", cc="9.0"))

    cpu = DeviceInfo(vendor="cpu", index=0, name="Test Chip", memory_total_bytes=8 * GIB, sources=["cpu"])
    app = create_app(machine_of([cpu], Sample(utilization_pct=3)), fast_config(), add_torch_view=slow_torch_view)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "Test Chip" in screen_text(app), timeout=5.0)
        assert "torch loading…" in screen_text(app) and app.torch_state == "loading"
        release.set()
        table = app.query_one(DeviceTable)
        await wait_until(pilot, lambda: len(table.row_keys) == 2, timeout=5.0)
        await pilot.pause(0.1)
        text = screen_text(app)
        assert app.torch_state == "ready"
        assert "torch 9.9.9" in text and "H100" in text
        await open_detail(pilot, app, "nvidia:0")
        assert "CUDA 12.4" in screen_text(app)


async def test_charts_replot_only_when_a_column_of_history_has_passed():
    config = fast_config(0.1)  # ten readings a second into a ten-minute chart: ~10 s per column
    app = create_app(machine_of([gpu()], Sample(utilization_pct=40)), config, add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await open_detail(pilot, app, "nvidia:0")
        chart = app.query_one(DeviceCard).chart
        await wait_until(pilot, lambda: chart._plotted_data, timeout=5.0)  # the first reading is drawn at once
        replots = chart.replots
        await pilot.pause(1.0)
        assert len(app.history) >= 6
        assert chart.replots == replots  # the gauges moved on; the chart waits for its next column
        assert chart.replot_gap_s > 5


async def test_a_failing_torch_step_is_reported_not_fatal():
    def broken_torch_view(machine: Machine) -> None:
        raise RuntimeError("libtorch_cuda.so: cannot open shared object file")

    app = create_app(machine_of([gpu()], Sample(utilization_pct=1)), fast_config(), add_torch_view=broken_torch_view)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.torch_state == "failed", timeout=5.0)
        await pilot.pause(0.1)
        text = screen_text(app)
        assert "torch n/a" in text and "libtorch_cuda.so" in text
        assert app.is_running and app.query_one(DeviceTable).row_keys == ["nvidia:0"]


async def test_views_come_from_the_registry_and_are_built_when_first_shown(monkeypatch):
    from textual.widgets import Static

    built = []

    def extra_view(app):
        built.append(app)
        return Static(f"extra view for {app.machine.host.hostname}", id="extra")

    monkeypatch.setattr(views, "VIEWS", [*views.VIEWS, views.ViewSpec("extra", "Extra", "x", extra_view)])
    app = create_app(machine_of([gpu()], Sample(utilization_pct=1)), fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        assert views.VIEWS[0].id == "dashboard" and app.query(DeviceTable)
        assert not built  # not built until shown
        app.action_show_view("extra")
        await wait_until(pilot, lambda: app.query("#extra"), timeout=5.0)
        await pilot.pause(0.05)
        assert built == [app] and "extra view for testbox" in screen_text(app)
        await pilot.press("d")
        await pilot.pause(0.05)
        assert "GeForce RTX 3060" in screen_text(app)


async def test_pause_stops_polling_and_resume_restarts_it():
    app = create_app(machine_of([gpu()], Sample(utilization_pct=1)), fast_config(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(app.history) >= 1, timeout=5.0)
        await pilot.press("p")
        await wait_until(pilot, lambda: not app._polling, timeout=5.0)  # a poll in flight may still land
        paused_at = len(app.history)
        await pilot.pause(0.4)
        assert len(app.history) == paused_at and "paused" in app.sub_title
        await pilot.press("p")
        await wait_until(pilot, lambda: len(app.history) > paused_at, timeout=5.0)
