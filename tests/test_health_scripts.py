"""The Slurm Prolog/Epilog (examples/slurm/gpudash-health.sh) and the node-problem-detector plugin
(examples/node-problem-detector/) run for real against replays, with a fake `scontrol` (and `logger`) first
on PATH that write down how they were called: a planted fault drains this node with the checks in the reason;
a healthy node or a gpudash that could not run drains nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from health_snapshots import faulty_replay
from servers import DGX, REPO

SLURM = REPO / "examples" / "slurm" / "gpudash-health.sh"
NPD = REPO / "examples" / "node-problem-detector"
GPUDASH = str(Path(sys.executable).with_name("gpudash"))


@pytest.fixture
def fake_bin(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("scontrol", "logger"):
        tool = folder / name
        tool.write_text(
            f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{tmp_path}/{name}.calls"\nprintf -- "--\\n" >> "{tmp_path}/{name}.calls"\n'
        )
        tool.chmod(0o755)
    return folder


def run(script, fake_bin, replay=None, **env):
    environ = {**os.environ, "PATH": f"{fake_bin}{os.pathsep}{os.environ['PATH']}", "GPUDASH": GPUDASH, **env}
    if replay is not None:
        environ["GPUDASH_REPLAY"] = str(replay)
    return subprocess.run([str(script)], capture_output=True, text=True, env=environ, timeout=180, cwd=fake_bin)


def calls(tmp_path, name):
    path = tmp_path / f"{name}.calls"
    if not path.exists():
        return []
    return [c.strip("\n").split("\n") for c in path.read_text().split("--\n") if c.strip()]


def test_the_prolog_drains_the_node_with_the_critical_checks_as_reason(tmp_path, fake_bin):
    done = run(SLURM, fake_bin, faulty_replay(tmp_path))
    assert done.returncode == 1, done.stderr  # a Prolog failing: Slurm does not start the job here
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
    [drain] = calls(tmp_path, "scontrol")
    assert drain[:3] == ["update", f"nodename={node}", "state=drain"]
    reason = drain[3]
    assert reason.startswith("reason=gpudash: CRITICAL ")
    for part in ("gpu.lost nvidia:3 (reboot)", "gpu.ecc.sram_uncorrected nvidia:5 (reset_gpu)", "gpu.count host"):
        assert part in reason, reason
    assert "nvidia:4" not in reason and len(reason) <= len("reason=") + 250
    assert any(line[-1].startswith(f"drained {node}: gpudash: CRITICAL") for line in calls(tmp_path, "logger"))


def test_the_epilog_drains_too_and_exits_0(tmp_path, fake_bin):
    done = run(SLURM, fake_bin, faulty_replay(tmp_path), SLURM_SCRIPT_CONTEXT="epilog_slurmd")
    assert done.returncode == 0, done.stderr
    assert len(calls(tmp_path, "scontrol")) == 1


def test_a_healthy_node_and_a_broken_gpudash_drain_nothing(tmp_path, fake_bin):
    assert run(SLURM, fake_bin, DGX).returncode == 0
    assert calls(tmp_path, "scontrol") == []
    done = run(SLURM, fake_bin, DGX, GPUDASH_ARGS="--expect-gpus -1")  # gpudash exits 2: a usage error
    assert done.returncode == 0 and calls(tmp_path, "scontrol") == []
    assert any("without a CRITICAL result" in c[-1] for c in calls(tmp_path, "logger"))
    # --expect-gpus 9 on the 8-GPU replay: fewer GPUs than expected is CRITICAL
    assert run(SLURM, fake_bin, DGX, GPUDASH_ARGS="--expect-gpus 9").returncode == 1
    assert "gpu.count host (reboot)" in calls(tmp_path, "scontrol")[0][3]


def test_the_node_problem_detector_plugin_follows_its_protocol(tmp_path, fake_bin):
    config = json.loads((NPD / "gpudash-health.json").read_text())
    [rule] = config["rules"]
    assert config["plugin"] == "custom" and rule["condition"] == config["conditions"][0]["type"]
    assert Path(rule["path"]).name == "gpudash-health.sh"
    script = NPD / "gpudash-health.sh"
    bad = run(script, fake_bin, faulty_replay(tmp_path))
    assert bad.returncode == 1  # NonOK
    assert "gpu.lost nvidia:3 (reboot)" in bad.stdout.splitlines()[0]
    good = run(script, fake_bin, DGX)
    assert (good.returncode, good.stdout.strip()) == (0, "gpudash check: no CRITICAL result")
    broken = run(script, fake_bin, DGX, GPUDASH_ARGS="--expect-gpus -1")
    assert broken.returncode == 2  # Unknown
    assert calls(tmp_path, "scontrol") == []


def test_shellcheck_accepts_the_scripts():
    shellcheck = subprocess.run(["which", "shellcheck"], capture_output=True, text=True).stdout.strip()
    if not shellcheck:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run([shellcheck, str(SLURM), str(NPD / "gpudash-health.sh")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
