"""examples/slurm/gpudash-preflight-prolog.sh and gpudash-preflight.sbatch (issue 24 item 7): the prolog runs a
real preflight (torchrun, 2 CPU ranks, rank 1 planted at half speed) and drains this node through scontrol
(a recorder standing in for it), naming the failing check; a passing node is left alone. Both pass shellcheck."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from servers import REPO, free_port

PROLOG = REPO / "examples" / "slurm" / "gpudash-preflight-prolog.sh"
SBATCH = REPO / "examples" / "slurm" / "gpudash-preflight.sbatch"


def prolog(tmp_path, fault: str, args: str) -> tuple[subprocess.CompletedProcess, str]:
    record = tmp_path / "scontrol.args"
    scontrol = tmp_path / "scontrol"
    scontrol.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    scontrol.chmod(0o755)
    preflight = (f"{sys.executable} -m torch.distributed.run --nproc-per-node 2 --master-addr 127.0.0.1 "
                 f"--master-port {free_port()} {REPO / 'tests' / 'preflight_rank.py'} preflight")  # fmt: skip
    env = dict(os.environ, PREFLIGHT=preflight, PREFLIGHT_ARGS=args,
               PYTHON=sys.executable, SCONTROL=str(scontrol), PLANT_RANK="1", PLANT_FAULT=fault,
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")])))  # fmt: skip
    run = subprocess.run(["bash", str(PROLOG)], env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    return run, record.read_text() if record.exists() else ""


def test_the_prolog_drains_a_node_that_fails(tmp_path):
    # --expect-gpus 1 on CPU ranks: every rank's node lacks its GPU, a CRITICAL whatever the machine's load (a slow
    # rank's speed verdict is only a WARN when both CPU ranks time the same busy cores, and a WARN never drains).
    run, args = prolog(tmp_path, "", "--no-checks --precisions fp32 --no-speed --expect-gpus 1")
    assert run.returncode == 1, run.stderr
    lines = args.splitlines()
    assert lines[:3] == ["update", f"nodename={os.uname().nodename.split('.')[0]}", "state=drain"], args
    assert lines[3].startswith("reason=gpudash preflight: rank 0 gpu.count: ") and len(lines[3]) < 240, args


def test_the_prolog_leaves_a_good_node_alone(tmp_path):
    # Without the speed part: two CPU ranks sharing this busy machine may differ by chance.
    run, args = prolog(tmp_path, "", "--no-checks --precisions fp32 --no-speed")
    assert run.returncode == 0 and args == "", run.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_the_examples_pass_shellcheck():
    run = subprocess.run(["shellcheck", str(PROLOG), str(SBATCH)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout
