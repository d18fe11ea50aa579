"""`gpudash info` shows each GPU's worst health from its driver counters (text and --json), snapshots record the
health counters and replays judge them, labelled replayed. Over the fake NVML (tests/fakes.py) in its contained
child, as on a real machine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import H100, make_fake_pynvml
from fakes import real_pynvml

from gpudash import strict_json
from gpudash.cli import main
from gpudash.contracts.validation import problems

GPU1 = dict(H100, index=1, uuid="GPU-11111111-2222-3333-4444-555555555555", pci_bus_id="00000000:18:00.0")
GPU2 = dict(H100, index=2, uuid="GPU-22222222-2222-3333-4444-555555555555", pci_bus_id="00000000:2A:00.0")


def fake(monkeypatch, gpus, **kw):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(list(gpus), **kw))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)


def info_json(capsys, *args):
    assert main([*args, "info", "--json", "--no-torch"]) == 0
    data = strict_json.loads(capsys.readouterr().out)
    assert problems("info", data) == []
    return {d["vendor"] + ":" + str(d["index"]): d for d in data["devices"]}


FAULTY = [H100, dict(GPU1, health={"ecc": {"volatile_sram_uncorrected": 2}}), GPU2]
LOST_2 = {(2, "handle"): real_pynvml.NVMLError_GpuIsLost()}


def test_info_shows_the_worst_health_of_each_gpu(monkeypatch, capsys):
    fake(monkeypatch, FAULTY, errors=LOST_2)
    devices = info_json(capsys)
    assert devices["nvidia:0"]["health"] == {
        "worst": "OK",
        "source": "live",
        "counters": True,
        "checks": devices["nvidia:0"]["health"]["checks"],
        "findings": [],
        "remembered": [],
    }
    assert devices["nvidia:0"]["health"]["checks"] >= 12
    bad = devices["nvidia:1"]["health"]
    assert (bad["worst"], bad["source"], bad["counters"]) == ("CRITICAL", "live", True)
    assert bad["findings"][0]["id"] == "gpu.ecc.sram_uncorrected"
    assert bad["findings"][0]["action"] == "reset_gpu"
    lost = devices["nvidia:2"]["health"]
    assert (lost["worst"], lost["counters"], lost["findings"][0]["id"]) == ("CRITICAL", False, "gpu.lost")
    assert devices["cpu:0"]["health"] is None  # the host's checks are gpudash check's

    fake(monkeypatch, FAULTY, errors=LOST_2)
    assert main(["info", "--no-processes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "health nvidia:0: OK (the driver's counters)" in lines
    line = next(x for x in lines if x.startswith("health nvidia:1:"))
    assert "CRITICAL gpu.ecc.sram_uncorrected: volatile sram uncorrected: 2 (limit 0) -> reset_gpu" in line
    assert next(x for x in lines if x.startswith("health nvidia:2:")).startswith("health nvidia:2: CRITICAL gpu.lost")


def test_snapshots_record_the_counters_and_replays_judge_them(monkeypatch, capsys, tmp_path):
    fake(monkeypatch, FAULTY, errors=LOST_2)
    snap = tmp_path / "faulty.json"
    assert main(["snapshot", "-o", str(snap), "--seconds", "0"]) == 0
    capsys.readouterr()
    recorded = json.loads(snap.read_text())
    assert problems("snapshot", recorded) == []
    by_key = {f"{d['vendor']}:{d['index']}": d for d in recorded["devices"]}
    assert by_key["nvidia:1"]["health_counters"]["counters"]["ecc"]["volatile_sram_uncorrected"] == 2
    assert by_key["nvidia:0"]["health_counters"]["counters"]["pcie"] == {
        "gen": 5,
        "max_gen": 5,
        "width": 16,
        "max_width": 16,
    }
    assert "GpuIsLost" in by_key["nvidia:2"]["health_counters"]["unavailable"]["device"]
    assert "health_counters" not in by_key["cpu:0"]

    monkeypatch.setitem(sys.modules, "pynvml", None)  # the replay reads nothing live
    devices = info_json(capsys, "--replay", str(snap))
    assert devices["nvidia:1"]["health"]["source"] == "replay"
    assert devices["nvidia:1"]["health"]["counters"] is True
    assert devices["nvidia:1"]["health"]["findings"][0]["id"] == "gpu.ecc.sram_uncorrected"
    assert devices["nvidia:0"]["health"]["worst"] == "OK"
    assert devices["nvidia:2"]["health"]["worst"] == "CRITICAL"

    assert main(["--replay", str(snap), "info", "--no-processes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "health nvidia:0: OK (replayed: the counters the snapshot recorded)" in lines
    assert any(x.startswith("health nvidia:1: CRITICAL") and "(replayed: the counters" in x for x in lines)

    # gpudash check judges the same recorded counters (host checks left out: they would describe this machine)
    assert main(["--replay", str(snap), "check", "--json"]) == 1
    checks = strict_json.loads(capsys.readouterr().out)["checks"]
    ecc = next(c for c in checks if c["id"] == "gpu.ecc.sram_uncorrected" and c["device"] == "nvidia:1")
    assert ecc["severity"] == "CRITICAL"
    assert not [c for c in checks if c["id"].startswith("host.")]


def test_an_old_snapshot_without_counters_judges_reachability_only(capsys):
    devices = info_json(capsys, "--replay", "examples/snapshots/dgx-h100-8gpu.json")
    health = devices["nvidia:0"]["health"]
    assert (health["worst"], health["source"], health["counters"], health["checks"]) == ("OK", "replay", False, 1)


def test_a_damaged_health_record_is_one_line(capsys, tmp_path):
    data = json.loads(Path("examples/snapshots/dgx-h100-8gpu.json").read_text())
    data["devices"][0]["health_counters"] = {"counters": {"pcie": {"gen": "five"}}, "unavailable": {}}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["--replay", str(bad), "info"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0] and "snapshot contract" in err[0], err
