"""examples/train_with_gpudash.py trains on the CPU from exported files: the loss goes down."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "train_with_gpudash.py"


def run(*args, timeout=120):
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_REPLAY"}
    return subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO
    )


@pytest.mark.parametrize(
    "replay, fmt, dtype",
    [
        (None, "toml", "float32"),  # this CPU, spec facts only: fp32
        (REPO / "examples" / "snapshots" / "h100-80gb.json", "json", "bfloat16"),  # a GPU export, run on the CPU
    ],
)
def test_example_trains_from_an_export(tmp_path, replay, fmt, dtype):
    settings = tmp_path / f"gpudash.{fmt}"
    replay_args = ["--replay", replay] if replay else []
    made = run("-m", "gpudash", *replay_args, "export", "--bench", "none", "--format", fmt, "-o", settings)
    assert made.returncode == 0, made.stderr
    res = run(EXAMPLE, settings, "--steps", "30")
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"amp dtype {dtype}" in res.stdout
    assert "loss went down" in res.stdout


def test_example_reports_a_bad_file(tmp_path):
    res = run(EXAMPLE, tmp_path / "missing.toml")
    assert res.returncode == 2
    assert res.stderr.strip().endswith(
        f"missing.toml: export file not found (write one with `gpudash export -o {tmp_path / 'missing.toml'}`)"
    )
