"""Snapshots: recorded, replayed, and rejected with one clear line when damaged."""

import json

import pytest
from conftest import H100, snapshot_dict

from gpudash.devices import discover
from gpudash.errors import UsageError
from gpudash.record import record


def test_replay_is_the_whole_machine_and_says_so(h100_snapshot):
    machine = discover(replay=str(h100_snapshot))
    assert machine.replayed
    assert [d.vendor for d in machine.devices] == ["nvidia"]  # the live CPU is not mixed in
    assert machine.label == "replayed from h100.json"
    dev = machine.devices[0]
    assert dev.sources == ["replay"]


def test_replay_cycles_through_samples(h100_snapshot):
    machine = discover(replay=str(h100_snapshot))
    dev = machine.devices[0]
    utils = [machine.sample(dev).utilization_pct for _ in range(4)]
    assert utils == [35, 90, 35, 90]


def test_env_variable_replays(h100_snapshot, monkeypatch):
    monkeypatch.setenv("GPUDASH_REPLAY", str(h100_snapshot))
    assert discover().replayed


def test_origin_note_is_part_of_the_label(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(snapshot_dict(H100, origin="built from public spec data")))
    assert discover(replay=str(path)).label == "replayed from spec.json (built from public spec data)"


def test_unavailable_fields_replay_with_their_reason(tmp_path):
    dev = dict(H100, samples=[{"memory_used_bytes": 1, "unavailable": {"power_w": "NotSupported"}}])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snapshot_dict(dev)))
    machine = discover(replay=str(path))
    sample = machine.sample(machine.devices[0])
    assert sample.power_w is None and sample.unavailable == {"power_w": "NotSupported"}


def test_record_then_replay_round_trip(no_vendor_libs, tmp_path):
    live = discover(include_torch=False)
    data = record(live, seconds=0.2, interval=0.1, sleep=lambda s: None)
    assert data["format"] == "gpudash-snapshot" and data["version"] == 1
    assert len(data["devices"][0]["samples"]) == 3
    path = tmp_path / "me.json"
    path.write_text(json.dumps(data))
    again = discover(replay=str(path))
    assert [d.name for d in again.devices] == [d.name for d in live.devices]
    assert again.devices[0].cpu_features == live.devices[0].cpu_features


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ("[]", "a snapshot must be a JSON object"),
        (json.dumps({"format": "other"}), "format: expected 'gpudash-snapshot'"),
        (
            json.dumps({**snapshot_dict(), "version": 2}),
            "version: snapshot version 2 is newer than this gpudash reads (1)",
        ),
        (json.dumps({k: v for k, v in snapshot_dict().items() if k != "devices"}), "devices: missing or not a list"),
        (json.dumps(snapshot_dict({k: v for k, v in H100.items() if k != "name"})), "devices[0].name: missing"),
        (json.dumps(snapshot_dict(dict(H100, vendor="intel"))), "devices[0].vendor: expected one of nvidia, amd, cpu"),
        (
            json.dumps(snapshot_dict(dict(H100, memory_total_bytes="80GB"))),
            "devices[0].memory_total_bytes: wrong type str",
        ),
        (
            json.dumps(snapshot_dict(dict(H100, samples=[{"processes": [{"name": "python"}]}]))),
            "devices[0].samples[0].processes[0].pid: missing or not an integer",
        ),
        (
            json.dumps(snapshot_dict(dict(H100, samples=[{"processes": {"pid": 1}}]))),
            "devices[0].samples[0].processes: not a list",
        ),
        (
            json.dumps(snapshot_dict(dict(H100, samples=[{"mig_instances": [{"processes": []}]}]))),
            "devices[0].samples[0].mig_instances[0].index: missing or not an integer",
        ),
        (
            json.dumps(snapshot_dict(dict(H100, samples=[{"mig_instances": [{"index": 0, "processes": [7]}]}]))),
            "devices[0].samples[0].mig_instances[0].processes[0]: not an object",
        ),
    ],
)
def test_damaged_snapshots_give_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError) as err:
        discover(replay=str(path))
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_snapshot(tmp_path):
    with pytest.raises(UsageError, match="snapshot file not found"):
        discover(replay=str(tmp_path / "nope.json"))


def test_processes_and_mig_instances_replay(tmp_path):
    from test_nvidia_adapter import MIG_SAMPLE

    xorg = {"pid": 2211, "name": "Xorg", "type": "G", "user": "root", "command": "/usr/lib/xorg/Xorg vt1"}
    sample = dict(MIG_SAMPLE, processes=MIG_SAMPLE["processes"] + [dict(xorg, memory_used_bytes=4 * 2**20)])
    path = tmp_path / "mig.json"
    path.write_text(json.dumps(snapshot_dict(dict(H100, samples=[sample]))))
    machine = discover(replay=str(path))
    replayed = machine.sample(machine.devices[0])
    assert [p.pid for p in replayed.processes][-1] == 2211
    graphics = replayed.processes[-1]
    assert (graphics.type, graphics.user, graphics.command) == ("G", "root", "/usr/lib/xorg/Xorg vt1")
    assert [(m.index, m.name, len(m.processes)) for m in replayed.mig_instances] == [
        (0, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 1),
        (2, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 0),
    ]
    assert replayed.mig_instances[0].processes[0].pid == MIG_SAMPLE["processes"][0]["pid"]
    assert replayed.unavailable == {"utilization_pct": "NotSupported"}


def test_lost_gpu_records_and_replays_as_lost(monkeypatch, tmp_path):
    import sys

    from fakes import make_fake_pynvml, real_pynvml

    second = dict(H100, index=1, uuid="GPU-2")
    monkeypatch.setitem(
        sys.modules,
        "pynvml",
        make_fake_pynvml([H100, second], errors={(1, "handle"): real_pynvml.NVMLError_GpuIsLost()}),
    )
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    data = record(discover(include_torch=False), seconds=0, interval=1)
    path = tmp_path / "lost.json"
    path.write_text(json.dumps(data))
    replayed = discover(replay=str(path))
    lost = replayed.devices[1]
    assert (lost.status, lost.name, lost.unavailable["device"]) == ("lost", "lost (GpuIsLost)", "GpuIsLost")
    assert replayed.sample(lost).status == "lost"
    assert replayed.sample(replayed.devices[0]).processes is not None
