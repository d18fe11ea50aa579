"""`gpudash snapshot --redact` and `info --redact`: identifiers become stable placeholders, for public bug reports,
and the redacted snapshot still replays."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import H100, snapshot_dict
from fakes import EXAMPLES

from gpudash.cli import main
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
    row = next(line for line in table.splitlines() if " 10001 " in line)  # the process table: pid, user, command
    assert "user-redacted-1" in row and row.endswith("command-redacted-1")


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


def test_a_saved_profile_can_be_redacted_and_still_loads_and_compares(tmp_path, capsys):
    """`bench --save` writes the hostname into the profile; `--redact` (or config snapshot.redact, the one
    setting for files meant to be shared) replaces it, and the profile still loads and compares."""
    h100 = str(EXAMPLES / "h100-80gb.json")
    plain, shared = tmp_path / "plain.json", tmp_path / "shared.json"
    assert main(["--replay", h100, "bench", "--no-plugins", "--save", str(plain)]) == 0
    assert main(["--replay", h100, "bench", "--no-plugins", "--save", str(shared), "--redact"]) == 0
    capsys.readouterr()
    assert json.loads(plain.read_text())["metadata"]["hostname"] == "h100-example"
    assert "h100-example" not in shared.read_text()
    assert json.loads(shared.read_text())["metadata"]["hostname"] == "host-redacted-1"
    assert main(["bench", "--load", str(shared)]) == 0
    assert main(["bench", "--compare", str(plain), str(shared), "--json"]) == 0
    capsys.readouterr()
    config = tmp_path / "config.toml"
    config.write_text("[snapshot]\nredact = true\n")
    by_config = tmp_path / "by-config.json"
    assert main(["--config", str(config), "--replay", h100, "bench", "--no-plugins", "--save", str(by_config)]) == 0
    assert json.loads(by_config.read_text())["metadata"]["hostname"] == "host-redacted-1"
    assert main(["--replay", h100, "bench", "--no-plugins", "--redact"]) == 2  # nothing to redact without --save
    assert "--redact: only with --save" in capsys.readouterr().err


def test_the_home_directory_inside_text_becomes_a_tilde(monkeypatch):
    monkeypatch.setenv("HOME", "/home/alice")
    red = redact({"notes": ["/home/alice/.venv/lib/torch.so: cannot open", "/home/alicebob/x and /home/alice."]})
    assert red["notes"] == ["~/.venv/lib/torch.so: cannot open", "/home/alicebob/x and ~."]
    monkeypatch.setenv("HOME", "/")  # a home of "/" would match every path: left alone
    assert redact({"notes": ["/usr/lib"]}) == {"notes": ["/usr/lib"]}
