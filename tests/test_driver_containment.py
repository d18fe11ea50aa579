"""A driver that hangs or aborts costs its devices' readings, never gpudash (gpudash.devices.contained).

The real NVML adapter runs in its forked child against a fake pynvml whose calls hang or call os.abort(), as a
wedged driver or a failing assertion in libnvidia-ml would.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from conftest import H100, make_fake_pynvml

from gpudash import lifetime
from gpudash.cli import main
from gpudash.devices import begin_discovery, discover
from gpudash.devices.contained import backend as contained
from gpudash.devices.contained.process import DriverProcess
from gpudash.render.monitor import short_cpu_name

LIMIT_S = 0.5


@pytest.fixture(autouse=True)
def short_limits(monkeypatch):
    monkeypatch.setattr(contained, "SAMPLE_LIMIT_S", LIMIT_S)
    monkeypatch.setattr(contained, "OPEN_LIMIT_S", 5.0)
    monkeypatch.setattr(contained, "DEVICES_LIMIT_S", 5.0)
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


def fake_nvml(monkeypatch, **faults):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, dict(H100, index=1)], faults=faults))


def nvidia(machine, index=0):
    return next(d for d in machine.devices if d.key == f"nvidia:{index}")


def child_pids(machine) -> list[int]:
    return [b._child.pid for b in (c.__self__ for c in machine.closers) if getattr(b, "_child", None) is not None]


def assert_reaped(pids: list[int]) -> None:
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        assert pid not in lifetime._groups


def test_a_hanging_call_is_na_with_its_name_and_gpudash_goes_on(monkeypatch):
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="hang")
    machine = discover(include_torch=False)
    assert [d.key for d in machine.devices] == ["nvidia:0", "nvidia:1", "cpu:0"]  # describing needs no power
    pids = child_pids(machine)
    start = time.monotonic()
    sample = machine.sample(nvidia(machine))
    assert time.monotonic() - start < LIMIT_S + 1.5
    assert sample.memory_used_bytes is None and sample.power_w is None
    assert sample.unavailable["all"] == f"driver call timed out after {LIMIT_S:g} s in nvmlDeviceGetPowerUsage"
    # The other GPU of the same driver waits for the driver to be tried again; the CPU is read as always.
    other = machine.sample(nvidia(machine, 1))
    assert other.unavailable["all"].startswith(f"driver call timed out after {LIMIT_S:g} s in nvmlDeviceGetPowerUsage")
    assert "tried again in" in other.unavailable["all"]
    assert machine.sample(machine.devices[-1]).unavailable.get("all") is None
    assert_reaped(pids)  # the hung child was killed and reaped at once
    machine.close()


def test_an_aborting_driver_shows_as_na_with_the_signal(monkeypatch):
    fake_nvml(monkeypatch, nvmlDeviceGetTemperature="abort")
    machine = discover(include_torch=False)
    sample = machine.sample(nvidia(machine))
    assert sample.unavailable["all"] == "driver call crashed (process killed by SIGABRT) in nvmlDeviceGetTemperature"
    machine.close()


def test_the_driver_is_tried_again_and_readings_come_back(monkeypatch, tmp_path):
    flag = tmp_path / "wedged"
    flag.touch()
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage=f"hang-while:{flag}")
    monkeypatch.setattr(contained, "RESTART_DELAY_S", 0.0)
    machine = discover(include_torch=False)
    assert "timed out" in machine.sample(nvidia(machine)).unavailable["all"]
    flag.unlink()  # the GPU recovers
    sample = machine.sample(nvidia(machine))
    assert "all" not in sample.unavailable and sample.power_w in {s["power_w"] for s in H100["samples"]}
    machine.close()


def test_after_max_failures_the_vendor_stays_na_and_says_why(monkeypatch):
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="abort")
    monkeypatch.setattr(contained, "RESTART_DELAY_S", 0.0)
    machine = discover(include_torch=False)
    for _ in range(contained.MAX_FAILURES):
        assert "crashed" in machine.sample(nvidia(machine)).unavailable["all"]
    given_up = machine.sample(nvidia(machine)).unavailable["all"]
    assert given_up.startswith(f"sampling stopped after {contained.MAX_FAILURES} driver failures; the last: driver")
    assert "SIGABRT" in given_up
    assert child_pids(machine) == [] or all(p not in lifetime._groups for p in child_pids(machine))
    machine.close()


def test_an_abort_while_the_driver_starts_is_a_note_not_the_end(monkeypatch):
    fake_nvml(monkeypatch, nvmlInit="abort")
    machine = discover(include_torch=False)
    assert [d.key for d in machine.devices] == ["cpu:0"]
    assert any(
        n == "NVML: the driver failed while starting: driver call crashed (process killed by SIGABRT) in nvmlInit"
        for n in machine.notes
    ), machine.notes


def test_info_returns_with_a_hung_driver_and_prints_strict_json(monkeypatch, capsys):
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="hang", nvmlInit="print")
    start = time.monotonic()
    assert main(["info", "--json", "--no-torch"]) == 0
    assert time.monotonic() - start < 2 * LIMIT_S + 3
    out = capsys.readouterr().out
    data = json.loads(out)  # the driver's print went to the child's /dev/null, not into the JSON
    first = data["devices"][0]
    assert first["sample"]["unavailable"]["all"].startswith("driver call timed out")
    assert data["devices"][-1]["vendor"] == "cpu"


def test_close_ends_the_child(monkeypatch):
    fake_nvml(monkeypatch)
    machine = discover(include_torch=False)
    pids = child_pids(machine)
    assert len(pids) == 1 and machine.sample(nvidia(machine)).power_w is not None
    machine.close()
    assert_reaped(pids)


def test_amdsmi_is_contained_the_same_way(monkeypatch):
    from conftest import MI300X, make_fake_amdsmi

    smi = make_fake_amdsmi([MI300X])
    smi.amdsmi_get_gpu_activity = lambda handle: os.abort()
    monkeypatch.setitem(sys.modules, "amdsmi", smi)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    machine = discover(include_torch=False)
    amd = next(d for d in machine.devices if d.vendor == "amd")
    assert amd.name == MI300X["name"]  # described before anything went wrong
    reading = machine.sample(amd)
    assert reading.unavailable["all"] == "driver call crashed (process killed by SIGABRT) in amdsmi_get_gpu_activity"
    assert machine.sample(machine.devices[-1]).unavailable.get("all") is None  # the CPU is read as always
    machine.close()


async def test_the_dashboard_keeps_running_with_a_hung_driver(monkeypatch):
    """The poll that hits the hung call waits at most the limit; the card says why, the CPU card goes on."""
    from tui_helpers import no_torch, screen_text, wait_until

    from gpudash.config import defaults
    from gpudash.tui.app import create_app

    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="hang")
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    machine = discover(include_torch=False)
    app = create_app(machine, config, add_torch_view=no_torch)
    async with app.run_test(size=(140, 45)) as pilot:
        cpu = next(d for d in machine.devices if d.vendor == "cpu")
        # Both in one frame: the card says why, and the CPU's row still draws (a check between the reading's
        # text and the screen's next layout could see the table at its old height).
        await wait_until(
            pilot,
            lambda: "driver call timed out" in (text := screen_text(app)) and short_cpu_name(cpu.name)[:20] in text,
            timeout=15,
        )
        assert app.is_running
        await pilot.press("p")  # the dashboard still answers keys
        await pilot.pause(0.1)
        assert app.paused


def test_readings_read_ahead_are_answered_without_being_asked_once_each(monkeypatch):
    """`gpudash info` has the child read every device's health and sample right after describing them
    (begin_discovery(read_ahead=...)), while it imports: those answers are used, in any order, once."""
    fake_nvml(monkeypatch)
    sent = []
    send = DriverProcess.send
    monkeypatch.setattr(DriverProcess, "send", lambda self, message: sent.append(message["op"]) or send(self, message))
    machine = begin_discovery(read_ahead=("health", "sample")).machine(include_torch=False)
    try:
        first = machine.sample(nvidia(machine, 1))  # the health answers come before it: read and kept
        health = machine.health_readers["nvidia:0"]()
        assert "sample" not in sent and "health" not in sent
        assert first.power_w is not None and first.processes is not None and health["counters"]
        machine.sample(nvidia(machine, 1))  # used once: this one is asked for
        assert sent.count("sample") == 1 and "health" not in sent
    finally:
        machine.close()


def test_a_call_hanging_in_a_read_ahead_is_caught_by_that_readings_limit(monkeypatch):
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="hang")
    machine = begin_discovery(read_ahead=("health", "sample")).machine(include_torch=False)
    try:
        assert machine.health_readers["nvidia:1"]()["counters"]  # read before the hang
        start = time.monotonic()
        sample = machine.sample(nvidia(machine))
        assert time.monotonic() - start < LIMIT_S + 3
        assert sample.unavailable["all"].startswith(f"driver call timed out after {LIMIT_S:g} s")
        assert "nvmlDeviceGetPowerUsage" in sample.unavailable["all"]
    finally:
        machine.close()


def test_a_round_of_readings_is_one_request_to_the_child(monkeypatch):
    fake_nvml(monkeypatch)
    sent = []
    send = DriverProcess.send
    monkeypatch.setattr(DriverProcess, "send", lambda self, message: sent.append(message["op"]) or send(self, message))
    machine = discover(include_torch=False)
    try:
        rounds = [machine.sample_all(), machine.sample_all()]
        assert sent.count("samples") == 2 and "sample" not in sent  # one request a round, for both GPUs
        for samples in rounds:
            assert list(samples) == ["nvidia:0", "nvidia:1", "cpu:0"]
            for key in ("nvidia:0", "nvidia:1"):  # whole readings (the fake's figures change from one to the next)
                assert "all" not in samples[key].unavailable and samples[key].power_w is not None
                assert samples[key].processes is not None
    finally:
        machine.close()


def test_a_call_hanging_in_a_round_costs_that_round_and_is_named(monkeypatch):
    fake_nvml(monkeypatch, nvmlDeviceGetPowerUsage="hang")
    machine = discover(include_torch=False)
    try:
        start = time.monotonic()
        samples = machine.sample_all()
        assert time.monotonic() - start < LIMIT_S + 3
        assert samples["nvidia:0"].unavailable["all"].startswith(f"driver call timed out after {LIMIT_S:g} s")
        assert "nvmlDeviceGetPowerUsage" in samples["nvidia:0"].unavailable["all"]
        assert "tried again" in samples["nvidia:1"].unavailable["all"]
        assert samples["cpu:0"].memory_total_bytes  # the CPU is read in gpudash's own process, as before
    finally:
        machine.close()
