"""Issue 25 item 4, "every first-screen fact": the dashboard's first screen gives the driver and CUDA driver
versions and the compute mode where NVML reads them (the host line, whose parts are left out whole in a
documented order with a marker where it is too narrow, and `w` shows them all), and memory exact to the MiB on
request (`m`, or [ui] memory_units = "MiB")."""

from __future__ import annotations

import copy
import re
import sys

import pytest
from fakes import load_example, make_fake_pynvml
from tui_helpers import no_torch, wait_until

from gpudash.config import defaults, load_config
from gpudash.devices import discover
from gpudash.errors import UsageError
from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render.driver_facts import compute_modes, driver_parts
from gpudash.render.memory_units import used_of_mib
from gpudash.render.monitor import size
from gpudash.render.processes import columns_for
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.host_line import HOST_DROP_ORDER, HostLine
from gpudash.tui.widgets.process_table import ProcessTable

MIB = 1024 * 1024


def _gpu(index: int) -> DeviceInfo:
    return DeviceInfo(vendor="nvidia", index=index, name="H100", driver_version="550.54.15")


def test_driver_parts_name_each_fact_and_fold_compute_modes():
    devices = [_gpu(i) for i in range(4)] + [DeviceInfo(vendor="cpu", index=0, name="Xeon")]
    runtime = Runtime(driver="550.54.15", cuda_driver="12.4")
    same = {f"nvidia:{i}": Sample(compute_mode="default") for i in range(4)}
    assert driver_parts(devices, runtime, same) == [
        ("driver", "driver 550.54.15"),
        ("CUDA", "CUDA 12.4"),
        ("compute", "compute default"),
    ]
    mixed = dict(same, **{"nvidia:2": Sample(compute_mode="exclusive_process")})
    assert compute_modes(devices, mixed) == "default 0-1,3, exclusive_process 2"
    # Nothing reported, nothing invented: a CPU-only machine has no driver part, an unread mode no compute part.
    assert driver_parts([devices[-1]], Runtime(), {}) == []
    assert driver_parts(devices[:1], Runtime(), {"nvidia:0": Sample()}) == [("driver", "driver 550.54.15")]


def test_memory_to_the_mib():
    assert used_of_mib(62771 * MIB + 5, 81559 * MIB) == "62771/81559MiB"
    assert used_of_mib(None, 81559 * MIB) == "n/a/81559MiB"
    assert used_of_mib(None, None) == "n/a"


def test_memory_units_setting_is_checked_in_one_line(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[ui]\nmemory_units = "KiB"\n')
    with pytest.raises(UsageError) as caught:
        load_config(str(bad))
    assert str(caught.value).endswith("ui.memory_units: expected one of GiB, MiB, got 'KiB' (line 2)")
    assert "\n" not in str(caught.value)
    good = tmp_path / "g.toml"
    good.write_text('[ui]\nmemory_units = "MiB"\n')
    assert load_config(str(good))["ui"]["memory_units"] == "MiB"


def _app(monkeypatch, devices, **config_ui):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    config = defaults()
    config["ui"].update({"refresh_interval": 0.2, **config_ui})
    return create_app(discover(include_torch=False), config, add_torch_view=no_torch)


def _host_text(app) -> str:
    return app.query_one(HostLine).render().plain  # type: ignore[union-attr]


async def _ready(pilot, app) -> DeviceTable:
    table = app.query_one(DeviceTable)
    await wait_until(pilot, lambda: app.latest and table.row_keys and "compute" in _host_text(app), 30)
    return table


async def test_first_screen_at_80_columns_names_driver_cuda_and_compute_mode(monkeypatch):
    devices = load_example("dgx-h100-8gpu.json")["devices"]
    app = _app(monkeypatch, devices)
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        host = app.query_one(HostLine)
        line = _host_text(app)
        assert "driver 550.54.15" in line and "CUDA 12.4" in line and "compute default" in line
        assert len(line) <= 80 and "…" not in line
        # Left out whole, first in the documented order, and counted by the marker.
        assert host.dropped and host.dropped == [t for t in HOST_DROP_ORDER if t in host.dropped]
        assert host.dropped[0] == "load" and line.endswith(f"+{len(host.dropped)}›")
        # w: every part, the line wrapping at a separator onto a second one.
        app.query_one(DeviceTable).focus()
        await wait_until(pilot, lambda: isinstance(app.focused, DeviceTable))
        await pilot.press("w")
        await wait_until(pilot, lambda: "load " in _host_text(app))
        full = _host_text(app)
        assert "CPU " in full and "driver 550.54.15" in full and "›" not in full
        assert all(len(row) <= 80 for row in full.split("\n")) and host.styles.height.value == 2
        await pilot.press("w")
        await wait_until(pilot, lambda: "load " not in _host_text(app))


async def test_mixed_compute_modes_name_their_gpus(monkeypatch):
    devices = copy.deepcopy(load_example("dgx-h100-8gpu.json")["devices"])
    for device in devices[6:]:
        for sample in device["samples"]:
            sample["compute_mode"] = "exclusive_process"
    app = _app(monkeypatch, devices)
    async with app.run_test(size=(160, 40)) as pilot:
        await _ready(pilot, app)
        assert "compute default 0-5, exclusive_process 6-7" in _host_text(app)


async def test_m_shows_memory_to_the_mib_and_the_setting_starts_there(monkeypatch):
    devices = load_example("dgx-h100-8gpu.json")["devices"]
    total_mib = devices[0]["memory_total_bytes"] // MIB
    app = _app(monkeypatch, devices)

    def memory_cell(table: DeviceTable) -> str:
        return next(
            c.plain for c in table.cells_of("nvidia:0") if "/" in c.plain and ("G" in c.plain or "MiB" in c.plain)
        )

    def process_memory(app) -> dict[str, tuple[str, int | None]]:
        """Each listed process's GPU-MEM cell, beside the bytes it stands for."""
        processes = app.query_one(ProcessTable)
        at = [c.id for c in columns_for(processes.listed_rows)].index("gpu_mem")
        return {
            row.key: (processes.cells_of(row.key)[at].plain.strip(), row.proc.memory_used_bytes)
            for row in processes.shown_rows
        }

    async with app.run_test(size=(120, 30)) as pilot:
        table = await _ready(pilot, app)
        assert "MiB" not in memory_cell(table)
        await wait_until(pilot, lambda: process_memory(app))
        assert all(cell == size(used) for cell, used in process_memory(app).values())
        table.focus()
        await wait_until(pilot, lambda: app.focused is table)
        await pilot.press("m")
        await wait_until(pilot, lambda: "MiB" in memory_cell(table))
        assert re.search(rf"\b\d+/{total_mib}MiB\b", memory_cell(table))
        assert re.search(r"MEM \d+/\d+MiB", _host_text(app))
        # The process table's GPU memory follows the same key: "4MiB" where it said "4M".
        await wait_until(pilot, lambda: all(cell.endswith("MiB") for cell, _ in process_memory(app).values()))
        for cell, used in process_memory(app).values():
            assert used is not None and cell == f"{used // MIB}MiB"
        await pilot.press("m")
        await wait_until(pilot, lambda: "MiB" not in memory_cell(table))
        await wait_until(pilot, lambda: all(cell == size(used) for cell, used in process_memory(app).values()))

    app = _app(monkeypatch, devices, memory_units="MiB")
    async with app.run_test(size=(120, 30)) as pilot:
        table = await _ready(pilot, app)
        assert re.search(rf"\b\d+/{total_mib}MiB\b", memory_cell(table))
        await wait_until(pilot, lambda: process_memory(app))
        assert all(cell.endswith("MiB") for cell, _ in process_memory(app).values())
