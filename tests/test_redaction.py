"""`gpudash snapshot --redact` and `info --redact`: identifiers become stable placeholders, for public bug reports,
and the redacted snapshot still replays."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import H100, snapshot_dict

from gpudash.cli import main
from gpudash.errors import EXIT_USAGE
from gpudash.redaction import FIRST_PID, redact

ROOT = Path(__file__).resolve().parent.parent
MIG_UUID = "MIG-aaaa-1111"
PROCESS = {"pid": 4242, "name": "train.py", "user": "alice", "command": "python train.py --secret-run", "type": "C"}


def hostile_machine() -> dict:
    sample = {
        "memory_used_bytes": 2**30,
        "processes": [PROCESS, dict(PROCESS, pid=4343, name="eval.py")],
        "mig_instances": [{"index": 0, "uuid": MIG_UUID, "processes": [dict(PROCESS)]}],
        "unavailable": {"power_w": "alice's job on node7 holds GPU-5d2f0c1e-aaaa-bbbb-cccc-000000000001"},
    }
    second = dict(H100, index=1, uuid="GPU-second", pci_bus_id="00000000:18:00.0", samples=[sample])
    return snapshot_dict(dict(H100, samples=[sample]), second)


def test_identifiers_become_stable_placeholders():
    original = hostile_machine()
    red = redact(original)
    assert original["host"]["hostname"] == "node7"  # the input is left alone
    assert red["host"]["hostname"] == "host-redacted-1"
    first, second = red["devices"]
    assert (first["uuid"], second["uuid"]) == ("GPU-redacted-1", "GPU-redacted-2")
    assert (first["pci_bus_id"], second["pci_bus_id"]) == ("pci-redacted-1", "pci-redacted-2")
    procs = first["samples"][0]["processes"]
    assert [p["pid"] for p in procs] == [FIRST_PID, FIRST_PID + 1]
    assert [p["name"] for p in procs] == ["process-redacted-1", "process-redacted-2"]
    assert procs[0]["user"] == procs[1]["user"] == "user-redacted-1"
    assert procs[0]["command"] == "command-redacted-1" and procs[0]["type"] == "C"
    # The same process and MIG device on the other GPU get the same placeholders: stable within the file.
    assert second["samples"][0]["processes"][0] == procs[0]
    assert first["samples"][0]["mig_instances"][0]["uuid"] == second["samples"][0]["mig_instances"][0]["uuid"]
    assert first["samples"][0]["mig_instances"][0]["uuid"] == "MIG-redacted-1"
    assert (
        first["samples"][0]["unavailable"]["power_w"] == "user-redacted-1's job on host-redacted-1 holds GPU-redacted-1"
    )
    text = json.dumps(red)
    for secret in ("node7", "alice", "4242", "train.py", "secret-run", "GPU-5d2f", "00000000:17", MIG_UUID):
        assert secret not in text
    assert first["name"] == H100["name"] and first["memory_total_bytes"] == H100["memory_total_bytes"]


def test_a_redacted_snapshot_replays(tmp_path, capsys):
    source = tmp_path / "machine.json"
    source.write_text(json.dumps(hostile_machine()))
    out = tmp_path / "redacted.json"
    assert main(["--replay", str(source), "snapshot", "--redact", "--seconds", "0", "-o", str(out)]) == 0
    assert "node7" not in out.read_text() and "alice" not in out.read_text()
    assert main(["--replay", str(out), "info", "--json"]) == 0
    capsys.readouterr()
    assert main(["--replay", str(out), "info"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("host-redacted-1")
    row = next(line for line in table.splitlines() if line.startswith("nvidia:0/mig0"))
    assert row.split()[1] == str(FIRST_PID) and "user-redacted-1" in row and row.endswith("command-redacted-1")


def test_the_config_default_and_no_redact(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[snapshot]\nredact = true\n")
    source = tmp_path / "machine.json"
    source.write_text(json.dumps(hostile_machine()))
    base = ["--config", str(config), "--replay", str(source), "snapshot", "--seconds", "0", "-o", "-"]
    assert main(base) == 0
    assert json.loads(capsys.readouterr().out)["host"]["hostname"] == "host-redacted-1"
    assert main([*base, "--no-redact"]) == 0
    assert json.loads(capsys.readouterr().out)["host"]["hostname"] == "node7"


def test_info_json_redact(tmp_path, capsys):
    source = tmp_path / "machine.json"
    source.write_text(json.dumps(hostile_machine()))
    assert main(["--replay", str(source), "info", "--json", "--redact"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["host"]["hostname"] == "host-redacted-1" and data["devices"][0]["uuid"] == "GPU-redacted-1"
    assert data["devices"][0]["sample"]["processes"][0]["pid"] == FIRST_PID


# Calibration profiles (bench --save --redact) -------------------------------------------------------------


def _profile(tmp_path, name: str, *flags: str, config: str | None = None) -> dict:
    source = tmp_path / "machine.json"
    source.write_text(json.dumps(hostile_machine()))
    out = tmp_path / name
    head = ["--config", config] if config else []
    argv = [*head, "--replay", str(source), "bench", "--no-plugins", "--device", "nvidia:0", "--save", str(out)]
    assert main([*argv, *flags]) == 0
    return json.loads(out.read_text())


def test_a_redacted_profile_names_no_host_and_still_loads_and_compares(tmp_path, capsys):
    plain = _profile(tmp_path, "plain.json")
    red = _profile(tmp_path, "red.json", "--redact")
    assert plain["metadata"]["hostname"] == "node7"
    assert red["metadata"]["hostname"] == "host-redacted-1" and "node7" not in json.dumps(red)
    # Nothing else changes: the device's model, figures and provenance are what a published profile is for.
    assert {k: v for k, v in red["metadata"].items() if k != "hostname"} == {
        k: v for k, v in plain["metadata"].items() if k != "hostname"
    }
    assert red["precision_matrix"] == plain["precision_matrix"]
    capsys.readouterr()
    assert main(["bench", "--load", str(tmp_path / "red.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == red
    assert main(["bench", "--compare", str(tmp_path / "plain.json"), str(tmp_path / "red.json")]) == 0
    assert "B / A" in capsys.readouterr().out


def test_bench_redact_config_default_and_no_redact(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[bench]\nredact = true\n")
    assert _profile(tmp_path, "a.json", config=str(config))["metadata"]["hostname"] == "host-redacted-1"
    assert _profile(tmp_path, "b.json", "--no-redact", config=str(config))["metadata"]["hostname"] == "node7"
    # snapshot.redact is the snapshot's default only: a profile keeps the hostname that tells one's machines apart
    config.write_text("[snapshot]\nredact = true\n")
    assert _profile(tmp_path, "c.json", config=str(config))["metadata"]["hostname"] == "node7"


def test_redact_without_save_is_a_usage_error(capsys):
    assert main(["--replay", str(ROOT / "examples/snapshots/h100-80gb.json"), "bench", "--redact"]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["gpudash: error: --redact: only with --save (it decides what the profile holds)"]


def test_the_home_directory_inside_text_becomes_a_tilde(monkeypatch):
    monkeypatch.setenv("HOME", "/home/alice")
    red = redact({"notes": ["/home/alice/.venv/lib/torch.so: cannot open", "/home/alicebob/x and /home/alice."]})
    assert red["notes"] == ["~/.venv/lib/torch.so: cannot open", "/home/alicebob/x and ~."]
    monkeypatch.setenv("HOME", "/")  # a home of "/" would match every path: left alone
    assert redact({"notes": ["/usr/lib"]}) == {"notes": ["/usr/lib"]}
