"""The headless commands as a user runs them: output, exit codes, one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash.cli import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "snapshots"


def run(*args, env=None):
    full_env = {**os.environ, **(env or {})}
    full_env.pop("GPUDASH_REPLAY", None) if not (env and "GPUDASH_REPLAY" in env) else None
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args], capture_output=True, text=True, env=full_env, timeout=60
    )


def test_version_and_help():
    res = run("--version")
    assert res.returncode == 0 and res.stdout.startswith("gpudash ")
    res = run("--help")
    assert res.returncode == 0
    for command in ("info", "snapshot", "tui"):
        assert command in res.stdout


def test_info_table_live(no_vendor_libs, capsys):
    assert main(["info", "--no-torch"]) == 0
    out = capsys.readouterr().out
    assert "[live]" in out and "[cpu:0]" in out
    assert "fp32" in out


def test_info_json_contract_replayed(capsys):
    assert main(["--replay", str(EXAMPLES / "h100-80gb.json"), "info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == 1 and data["replayed"] is True
    dev = data["devices"][0]
    for key in (
        "index",
        "vendor",
        "name",
        "arch",
        "compute_capability",
        "gfx_target",
        "memory_total_bytes",
        "fp8_dtype",
        "precisions",
    ):
        assert key in dev
    assert (dev["vendor"], dev["arch"], dev["compute_capability"], dev["gfx_target"]) == (
        "nvidia",
        "Hopper",
        "9.0",
        None,
    )
    assert dev["fp8_dtype"] == "float8_e4m3fn"
    assert set(dev["precisions"]) == {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "fp4"}
    assert dev["precisions"]["bf16"]["native"] is True
    assert dev["precisions"]["fp4"]["native"] is False


def test_info_json_mi300x_fnuz(capsys):
    assert main(["info", "--json", "--replay", str(EXAMPLES / "mi300x.json")]) == 0
    dev = json.loads(capsys.readouterr().out)["devices"][0]
    assert (dev["arch"], dev["gfx_target"], dev["compute_capability"]) == ("CDNA3", "gfx942", None)
    assert dev["fp8_dtype"] == "float8_e4m3fnuz"


def test_replay_from_environment(capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_REPLAY", str(EXAMPLES / "rtx-3060.json"))
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "replayed from rtx-3060.json" in out and "Ampere" in out


def test_snapshot_writes_file_and_replays(no_vendor_libs, tmp_path, capsys):
    out = tmp_path / "me.json"
    assert main(["snapshot", "-o", str(out), "--seconds", "0.2", "--interval", "0.1"]) == 0
    assert "wrote" in capsys.readouterr().err
    data = json.loads(out.read_text())
    assert data["devices"][0]["vendor"] == "cpu" and len(data["devices"][0]["samples"]) == 3
    assert main(["snapshot", "-o", str(out), "--seconds", "0"]) == 0
    assert "replaced" in capsys.readouterr().err
    assert main(["--replay", str(out), "info"]) == 0
    assert "replayed from me.json" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--replay", "/nonexistent/x.json", "info"], "/nonexistent/x.json: snapshot file not found"),
        (
            ["snapshot", "-o", "/nonexistent/dir/x.json"],
            "-o /nonexistent/dir/x.json: folder /nonexistent/dir does not exist",
        ),
        (["snapshot", "-o", "x.json", "--interval", "0"], "--interval: expected seconds from 0.05 to 60"),
        (["--config", "/nonexistent/c.toml", "info"], "/nonexistent/c.toml: config file not found"),
    ],
)
def test_bad_input_one_line_no_traceback(args, message):
    res = run(*args)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == f"gpudash: error: {message}" or message in res.stderr.strip()
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr


def test_bad_config_value(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[ui]\nrefresh_interval = 0\n")
    res = run("--config", str(cfg), "info", "--no-torch")
    assert res.returncode == 2
    assert (
        res.stderr.strip()
        == f"gpudash: error: {cfg}: ui.refresh_interval: expected a value from 0.1 to 60, got 0 (line 2)"
    )


def test_corrupt_snapshot_via_env(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gpudash-snapshot", "version": 1}')
    res = run("info", env={"GPUDASH_REPLAY": str(bad)})
    assert res.returncode == 2
    assert res.stderr.strip() == f"gpudash: error: {bad}: host: missing or not an object"


def test_unknown_command_is_a_usage_error():
    res = run("frobnicate")
    assert res.returncode == 2 and res.stderr.startswith("gpudash: error: unknown command 'frobnicate'")


def test_json_stdout_stays_clean_without_rocm():
    # amdsmi is installed in the test venv but has no ROCm library: its import prints to stdout.
    res = run("info", "--json", "--no-torch")
    assert res.returncode == 0
    json.loads(res.stdout)


def test_info_lists_gpu_processes_biggest_first(tmp_path, capsys):
    from conftest import H100, snapshot_dict

    procs = [
        {"pid": 11, "name": "small", "memory_used_bytes": 2**30},
        {"pid": 22, "name": "train", "memory_used_bytes": 40 * 2**30},
    ]
    snap = tmp_path / "p.json"
    snap.write_text(json.dumps(snapshot_dict(dict(H100, samples=[dict(H100["samples"][0], processes=procs)]))))
    assert main(["--replay", str(snap), "info"]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(out) if line.split()[:2] == ["device", "pid"])
    rows = [line.split() for line in out[header + 1 : header + 3]]
    assert [(r[0], r[1], r[4] + " " + r[5], r[-1]) for r in rows] == [
        ("nvidia:0", "22", "40.0 GiB", "train"),
        ("nvidia:0", "11", "1.0 GiB", "small"),
    ]
