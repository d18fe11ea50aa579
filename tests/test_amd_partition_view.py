"""Issue 25 item 4: an AMD GPU's compute partition (SPX..CPX) and memory partition (NPS1..NPS8) shown the way
MIG is: a tag after the name in the device table and in `gpudash info`, a detail row, and two keys in
`info --json` and in a snapshot. One amdsmi read (gpudash.devices.amd_partition) serves them and `serve`."""

from __future__ import annotations

import copy
import json
import sys

from conftest import MI300X
from fakes import make_fake_amdsmi, make_fake_pynvml, real_pynvml
from tui_helpers import no_torch, open_detail, wait_until

from gpudash.cli import main
from gpudash.config import defaults
from gpudash.contracts.validation import problems
from gpudash.devices import discover
from gpudash.devices.amd import AmdSmiBackend
from gpudash.devices.amd_health import read_counters
from gpudash.devices.snapshot_file import _machine
from gpudash.models import Runtime
from gpudash.record import record
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_detail import DeviceDetail, field_rows
from gpudash.tui.widgets.device_table import DeviceTable


def mi300x(compute: str, memory: str) -> dict:
    device = copy.deepcopy(MI300X)
    device["health"] = {"partition": (compute, memory)}
    return device


def _amd_only(monkeypatch, devices: list[dict]) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi(devices))
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


def test_the_adapter_and_the_health_counters_read_the_same_modes(monkeypatch):
    _amd_only(monkeypatch, [mi300x("CPX", "NPS4"), mi300x("SPX", "NPS1")])
    backend = AmdSmiBackend()
    try:
        cpx, spx = backend.devices()
        assert (cpx.compute_partition, cpx.memory_partition) == ("CPX", "NPS4")
        assert (spx.compute_partition, spx.memory_partition) == ("SPX", "NPS1")
        assert "partition" not in cpx.unavailable
        assert read_counters(backend.smi, backend._handles[0])["counters"]["partition"] == {
            "compute": "CPX",
            "memory": "NPS4",
        }
    finally:
        backend.close()


def test_a_gpu_without_partitions_says_why(monkeypatch):
    unsupported = copy.deepcopy(MI300X)
    unsupported["health"] = {"partition": "NOT_SUPPORTED"}  # both getters raise AMDSMI_STATUS_NOT_SUPPORTED
    _amd_only(monkeypatch, [unsupported])
    backend = AmdSmiBackend()
    try:
        (device,) = backend.devices()
    finally:
        backend.close()
    assert device.compute_partition is None and device.memory_partition is None
    assert device.unavailable["partition"]  # amdsmi's reason, shown where the detail row says n/a
    rows = {label: (value, why) for label, value, why in field_rows(device, None, Runtime())}
    assert rows["partition"][0] == "n/a" and rows["partition"][1]


def test_info_text_and_json_carry_the_modes(monkeypatch, capsys):
    _amd_only(monkeypatch, [mi300x("CPX", "NPS4"), mi300x("SPX", "NPS1")])
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("]")[0] + "]": line for line in out.splitlines() if line.startswith("[amd:")}
    assert "CPX · NPS4" in rows["[amd:0]"] and "SPX · NPS1" in rows["[amd:1]"]
    assert main(["info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert not list(problems("info", doc))
    modes = {
        d["index"]: (d["compute_partition"], d["memory_partition"]) for d in doc["devices"] if d["vendor"] == "amd"
    }
    assert modes == {0: ("CPX", "NPS4"), 1: ("SPX", "NPS1")}


def test_a_snapshot_keeps_the_modes_and_an_older_one_still_replays(monkeypatch):
    _amd_only(monkeypatch, [mi300x("CPX", "NPS4")])
    machine = discover(include_torch=False)
    try:
        doc = json.loads(json.dumps(record(machine, 0, 1)))
    finally:
        machine.close()
    assert not list(problems("snapshot", doc))
    amd = next(d for d in doc["devices"] if d["vendor"] == "amd")
    assert (amd["compute_partition"], amd["memory_partition"]) == ("CPX", "NPS4")
    replayed = next(d.info for d in _machine(doc).devices if d.info.vendor == "amd")
    assert replayed.compute_partition == "CPX" and replayed.memory_partition == "NPS4"
    for device in doc["devices"]:  # written before the keys existed
        device.pop("compute_partition", None)
        device.pop("memory_partition", None)
    assert not list(problems("snapshot", doc))
    older = next(d.info for d in _machine(doc).devices if d.info.vendor == "amd")
    assert older.compute_partition is None and older.memory_partition is None


async def test_the_table_tags_the_name_and_the_detail_names_each_mode(monkeypatch):
    _amd_only(monkeypatch, [mi300x("CPX", "NPS4"), mi300x("SPX", "NPS1")])
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    app = create_app(discover(include_torch=False), config, add_torch_view=no_torch)
    async with app.run_test(size=(160, 40)) as pilot:
        table = app.query_one(DeviceTable)
        await wait_until(pilot, lambda: "amd:1" in table.row_keys and app.latest.get("amd:1") is not None, 30)

        def name_cell(key: str) -> str:
            return " ".join(cell.plain for cell in table.cells_of(key))

        await wait_until(pilot, lambda: "CPX · NPS4" in name_cell("amd:0") and "SPX · NPS1" in name_cell("amd:1"))
        await open_detail(pilot, app, "amd:0")
        fields = app.query_one(DeviceDetail).query_one("#detail-fields")
        await wait_until(
            pilot,
            lambda: any(
                "compute CPX · memory NPS4" in " ".join(c.plain for c in fields.cells_of(k))
                for k in fields.row_keys
                if k.split("\x00")[0] == "partition"
            ),
        )
