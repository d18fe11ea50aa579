"""The memory of bad GPUs (gpudash.health.memory): failed checks remembered per GPU UUID in the state folder
through gpudash.store, so `check` and `info` say "this GPU failed <id> on <date>, seen N times", also after the
GPU moved to another index; a damaged record is one warning and is replaced."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import H100, make_fake_pynvml

from gpudash import strict_json
from gpudash.cli import main
from gpudash.contracts.validation import problems

BAD_UUID = "GPU-11111111-2222-3333-4444-555555555555"
GPU1 = dict(H100, index=1, uuid=BAD_UUID, pci_bus_id="00000000:18:00.0")
ECC = {"ecc": {"volatile_sram_uncorrected": 2}}


def check(monkeypatch, capsys, tmp_path, gpus, *args):
    log = tmp_path / "kmsg"
    log.write_text("")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[health]\nkernel_log = '{log}'\n")
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(list(gpus)))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "none")
    code = main(["--config", str(cfg), "check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_failed_check_is_remembered_per_uuid_and_counted(monkeypatch, capsys, tmp_path, state_dir):
    code, out, _ = check(monkeypatch, capsys, tmp_path, [H100, dict(GPU1, health=ECC)], "--json")
    data = strict_json.loads(out)
    assert code == 1 and problems("check", data) == []
    [first] = data["remembered_failures"]
    assert (first["uuid"], first["device"], first["id"], first["severity"], first["count"]) == (
        BAD_UUID,
        "nvidia:1",
        "gpu.ecc.sram_uncorrected",
        "CRITICAL",
        1,
    )
    assert list(state_dir.glob("gpudash/gpu-failures-*.json"))

    # healthy now, and at index 0: the board is still known by its UUID, seen once
    code, out, _ = check(monkeypatch, capsys, tmp_path, [dict(GPU1, index=0)])
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("remembered "))
    assert line.startswith(f"remembered nvidia:0 {BAD_UUID}: failed gpu.ecc.sram_uncorrected (CRITICAL) on 20")
    assert "seen 1 time:" in line

    # failing again: seen twice
    check(monkeypatch, capsys, tmp_path, [H100, dict(GPU1, health=ECC)])
    code, out, _ = check(monkeypatch, capsys, tmp_path, [H100, dict(GPU1, health=ECC)], "--json")
    [again] = strict_json.loads(out)["remembered_failures"]
    assert again["count"] == 3 and again["first"] == first["first"]

    # info shows it beside the device
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, GPU1]))
    assert main(["info", "--json", "--no-torch"]) == 0
    info = strict_json.loads(capsys.readouterr().out)
    assert problems("info", info) == []
    remembered = info["devices"][1]["health"]["remembered"]
    assert [(r["id"], r["count"]) for r in remembered] == [("gpu.ecc.sram_uncorrected", 3)]
    assert info["devices"][0]["health"]["remembered"] == []
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, GPU1]))
    assert main(["info", "--no-processes"]) == 0
    text = capsys.readouterr().out
    assert "remembered nvidia:1: failed gpu.ecc.sram_uncorrected (CRITICAL) on 20" in text
    assert "seen 3 times" in text


def test_a_damaged_memory_is_one_warning_and_replaced(monkeypatch, capsys, tmp_path, state_dir):
    check(monkeypatch, capsys, tmp_path, [dict(GPU1, index=0, health=ECC)])
    [path] = state_dir.glob("gpudash/gpu-failures-*.json")
    record = json.loads(path.read_text())
    record["data"]["gpus"][BAD_UUID]["gpu.ecc.sram_uncorrected"]["count"] = "many"
    path.write_text(json.dumps(record))
    code, out, err = check(monkeypatch, capsys, tmp_path, [dict(GPU1, index=0, health=ECC)], "--json")
    assert code == 1
    warnings = [x for x in err.splitlines() if "remembered results ignored" in x]
    assert len(warnings) == 1 and str(path) in warnings[0], err
    [entry] = strict_json.loads(out)["remembered_failures"]
    assert entry["count"] == 1  # the damaged entry was dropped, this run counted afresh


def test_a_replay_is_never_remembered(capsys, tmp_path, state_dir):
    data = json.loads(Path("examples/snapshots/dgx-h100-8gpu.json").read_text())
    data["devices"][2]["status"] = "lost"
    data["devices"][2]["unavailable"] = {"device": "GpuIsLost"}
    snap = tmp_path / "lost.json"
    snap.write_text(json.dumps(data))
    assert main(["--replay", str(snap), "check", "--json"]) == 1
    assert strict_json.loads(capsys.readouterr().out)["remembered_failures"] == []
    assert not list(state_dir.glob("gpudash/gpu-failures-*.json"))
