"""The dashboard's start path (issue 25 item 7): the driver's child opens while Textual is imported, the first
reading is taken while Textual starts, and the health reading waits for the first frame's reading.

The real NVML adapter runs in its forked child against the fake pynvml (tests/conftest.make_fake_pynvml)."""

from __future__ import annotations

import sys
import threading

import psutil
import pytest
from conftest import H100, make_fake_pynvml
from tui_helpers import wait_until

from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import begin_discovery, discover
from gpudash.devices.contained import backend as contained
from gpudash.devices.nvidia import NvmlBackend, NvmlUnavailable
from gpudash.tui.app import create_app


@pytest.fixture(autouse=True)
def fake_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, dict(H100, index=1)]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children()}


def test_discovery_begun_forks_the_child_at_once_and_reads_it_later():
    before = _children()
    discovery = begin_discovery()
    forked = _children() - before
    assert forked  # NVML's child (and the amdsmi stand-in's) exist, asked to open, before anyone waits for them
    machine = discovery.machine(include_torch=False)
    try:
        assert [d.key for d in machine.devices] == ["nvidia:0", "nvidia:1", "cpu:0"]
        assert machine.runtime.driver  # the `open` answer was read: driver version, as discover() gives it
        sample = machine.sample(machine.devices[0])
        assert sample.unavailable.get("all") is None and sample.memory_used_bytes is not None
    finally:
        machine.close()
    reference = discover(include_torch=False)
    try:
        assert [d.key for d in reference.devices] == [d.key for d in machine.devices]
        assert reference.runtime.driver == machine.runtime.driver
    finally:
        reference.close()


def test_a_session_started_early_gives_the_same_machine_once():
    session = Session(defaults())
    session.start_machine()
    session.start_machine()  # a second start forks nothing more
    machine = session.machine(include_torch=False)
    try:
        assert session.machine() is machine
        assert [d.key for d in machine.devices] == ["nvidia:0", "nvidia:1", "cpu:0"]
    finally:
        machine.close()


def test_a_backend_not_waited_for_reads_nothing_before_its_devices():
    backend = contained.ContainedBackend("nvml", lambda wrap: NvmlBackend(wrap=wrap), NvmlUnavailable, wait=False)
    try:
        # An index means nothing before the devices are described (and the next answer would be theirs).
        assert backend.sample(0).unavailable["all"] == contained.NOT_DESCRIBED
        assert backend.health(0)["unavailable"]["all"] == contained.NOT_DESCRIBED
        assert len(backend.devices()) == 2  # reads `open`, then the `devices` answer asked with it
        assert backend.driver_version
        assert backend.sample(1).unavailable.get("all") is None
    finally:
        backend.close()


def test_a_driver_that_is_not_there_is_told_when_waited_for(monkeypatch):
    class Missing(Exception):
        pass

    def opener(wrap):
        raise Missing("no libnvidia-ml here")

    backend = contained.ContainedBackend("nvml", opener, Missing, wait=False)
    with pytest.raises(Missing, match="no libnvidia-ml here"):
        backend.wait_open()
    with pytest.raises(RuntimeError):  # closed: nothing more is asked of the child
        backend.devices()


async def test_the_first_reading_is_taken_before_the_mount_and_health_after_it():
    machine = discover(include_torch=False)
    threads: list[str] = []
    for key, sampler in list(machine.samplers.items()):
        machine.samplers[key] = lambda sampler=sampler: threads.append(threading.current_thread().name) or sampler()
    config = defaults()
    config["ui"]["refresh_interval"] = 3600.0  # one poll: the first
    try:
        app = create_app(machine, config, add_torch_view=lambda m: None)
        shown_when_health_began: list[bool] = []
        start = app.health_watch.start
        app.health_watch.start = lambda: shown_when_health_began.append(bool(app.latest)) or start()  # type: ignore[method-assign]
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: bool(app.latest) and app.health_watch.readings == 1, timeout=30)
            # Every device of the first reading was read by the thread begun with the app, none by a poll worker.
            assert threads == ["gpudash first reading"] * len(machine.devices)
            assert set(app.latest) == {d.key for d in machine.devices}
            # The health reading (60 driver calls a GPU, through the same child) began once that reading was in.
            assert shown_when_health_began == [True]
            assert set(app.health) == {"nvidia:0", "nvidia:1"}
    finally:
        machine.close()


def _footer_keys(app) -> list[str]:
    from textual.widgets._footer import FooterKey

    from gpudash.tui.widgets.settled_footer import SettledFooter

    footers = app.query(SettledFooter)  # none until the first reading is drawn: its row is a FooterSlot then
    return [key.description for footer in footers for key in footer.query(FooterKey)]


async def test_the_footer_is_built_once_after_the_first_reading_and_follows_the_keys(monkeypatch):
    import gpudash.tui.app as tui_app
    from gpudash.tui.widgets.settled_footer import SettledFooter

    # The footer's 1 s time limit is the test below's: on a loaded machine the first reading can take longer,
    # and the keys are then built at the limit and again once the focus settles, which is that path.
    monkeypatch.setattr(tui_app, "FOOTER_AT_THE_LATEST_S", 3600.0)
    machine = discover(include_torch=False)
    config = defaults()
    config["ui"]["refresh_interval"] = 3600.0
    try:
        app = create_app(machine, config, add_torch_view=lambda m: None)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: bool(_footer_keys(app)), timeout=30)
            footer = app.query_one(SettledFooter)
            assert "Quit" in _footer_keys(app) and "SIGTERM" in _footer_keys(app)  # the app's and the dashboard's
            assert footer.builds == 1  # the first screen's focus changes folded into one build
            # Another view's keys: the footer follows the focus, as Textual's does.
            await pilot.press("c")
            await wait_until(pilot, lambda: "SIGTERM" not in _footer_keys(app))
            assert footer.builds >= 2 and "Quit" in _footer_keys(app)
            await pilot.press("d")
            await wait_until(pilot, lambda: "SIGTERM" in _footer_keys(app))
    finally:
        machine.close()


@pytest.mark.parametrize("latest_s", [3600.0, 0.2])
async def test_the_footer_waits_for_the_first_reading_or_its_time_limit(monkeypatch, latest_s):
    import gpudash.tui.app as tui_app

    monkeypatch.setattr(tui_app, "FOOTER_AT_THE_LATEST_S", latest_s)
    machine = discover(include_torch=False)
    gate = threading.Event()
    for key, sampler in list(machine.samplers.items()):
        machine.samplers[key] = lambda sampler=sampler: gate.wait(30) and sampler()
    try:
        app = create_app(machine, defaults(), add_torch_view=lambda m: None)
        async with app.run_test(size=(120, 40)) as pilot:
            if latest_s > 60:  # no keys while the first reading is out (the focus is still settling then)
                for _ in range(5):
                    await pilot.pause(0.05)
                    assert _footer_keys(app) == [] and not app.latest
                gate.set()
                await wait_until(pilot, lambda: bool(app.latest) and bool(_footer_keys(app)), timeout=30)
            else:  # a reading that takes its time: the keys come at the time limit all the same
                await wait_until(pilot, lambda: bool(_footer_keys(app)), timeout=30)
                assert not app.latest
                gate.set()
    finally:
        gate.set()
        machine.close()


def test_the_first_screen_imports_no_chart_library_and_a_card_still_gets_its_chart():
    import subprocess

    code = (
        "import sys; import gpudash.tui.app, gpudash.tui.screens.dashboard; "
        "print(sorted(m for m in ('plotext', 'textual_plotext', 'gpudash.tui.widgets.history_chart') if m in sys.modules)); "
        "from gpudash.tui.widgets import DeviceCard; from gpudash.models import DeviceInfo; "
        "card = DeviceCard(DeviceInfo(vendor='cpu', index=0, name='x', sources=['cpu']), interval_s=1, window_s=60); "
        "print(type(card.chart).__name__, 'plotext' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"  # the dashboard's first screen shows no chart
    assert out[1] == "HistoryChart True"  # a card (the detail view, on demand) has its chart
