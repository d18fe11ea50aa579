"""examples/slurm/gpudash-preflight-prolog.sh and gpudash-preflight.sbatch (issue 24 item 7): the prolog runs a
real preflight (torchrun, 2 CPU ranks) and drains this node through scontrol (a recorder standing in for it),
naming the failing check; a passing node is left alone. The sbatch example runs under a real two-node Slurm
(tests/slurm_cluster.py: n1 and n2, both on this host): a failing preflight drains both nodes by their Slurm
names with the failing check as the reason and the training step never runs; a passing one runs it. Both
scripts pass shellcheck."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from servers import REPO, free_port

PROLOG = REPO / "examples" / "slurm" / "gpudash-preflight-prolog.sh"
SBATCH = REPO / "examples" / "slurm" / "gpudash-preflight.sbatch"
BIN = Path(sys.executable).parent
NODES = ("n1", "n2")
# The training step of the job: each task leaves a file naming its Slurm node.
TRAIN = 'import os\nopen(f"trained.{os.environ[\'SLURM_PROCID\']}", "w").write(os.environ["SLURMD_NODENAME"])\n'


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


@pytest.fixture(scope="module")
def slurm_two_nodes(slurm_two_node_cluster):
    """n1 and n2 (tests/slurm_cluster.py; the session's cluster, tests/conftest.py)."""
    return slurm_two_node_cluster


def sbatch(env: dict[str, str], folder: Path, **extra: str) -> subprocess.CompletedProcess:
    """The example as a user submits it, its #SBATCH resources overridden to fit this CPU-only cluster (one task
    on each of n1 and n2, no GPUs), `gpudash`, `python3` and `python` this checkout's (PATH, which sbatch passes
    on to the job), a quick preflight (PREFLIGHT_ARGS: these tests are about the drain, not the measurements).
    MASTER_ADDR: n1 is no name this host resolves. --time=5 lets Slurm end the job should anything hang."""
    env = {k: v for k, v in env.items()
           if k not in ("MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "GPUDASH_PREFLIGHT_NODE", "EXPECT_GPUS")}  # fmt: skip
    env.update(PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]), MASTER_ADDR="127.0.0.1", OMP_NUM_THREADS="1",
               PREFLIGHT_ARGS="--no-checks --no-speed --precisions fp32", **extra)  # fmt: skip
    (folder / "train.py").write_text(TRAIN)
    name = f"gpudash-sbatch-test-{os.getpid()}"
    try:
        return subprocess.run(["sbatch", "--wait", "--nodes=2", "--ntasks-per-node=1", "--gpus-per-node=0",
                               "--time=5", f"--job-name={name}", f"--chdir={folder}", f"--output={folder}/job.out",
                               str(SBATCH)], env=env, capture_output=True, text=True, timeout=200)  # fmt: skip
    finally:
        subprocess.run(["scancel", f"--name={name}"], env=env, capture_output=True, timeout=30)


def node(env: dict[str, str], name: str) -> dict[str, str]:
    """`scontrol show node`'s State and Reason (the reason without Slurm's "[user@time]" tail)."""
    shown = subprocess.run(["scontrol", "show", "node", name], env=env, capture_output=True, text=True, timeout=30)
    fields = {}
    for line in shown.stdout.splitlines():
        line = line.strip()
        for key in ("State", "Reason"):
            if line.startswith(f"{key}="):
                value = line.removeprefix(f"{key}=")
                fields[key] = value.split()[0] if key == "State" else value.rsplit(" [", 1)[0]
    return fields


def resume(env: dict[str, str]) -> None:
    """Undrain n1 and n2, and wait (bounded) until Slurm says so."""
    subprocess.run(["scontrol", "update", f"nodename={','.join(NODES)}", "state=resume"], env=env,
                   capture_output=True, timeout=30)  # fmt: skip
    deadline = time.monotonic() + 60
    while any("DRAIN" in node(env, n).get("State", "") for n in NODES):
        assert time.monotonic() < deadline, [node(env, n) for n in NODES]
        time.sleep(0.2)


def test_the_sbatch_example_drains_the_failing_nodes_under_slurm_and_does_not_train(slurm_two_nodes, tmp_path):
    """EXPECT_GPUS left at its default, 8: every rank's node (no GPU here) fails gpu.count, a CRITICAL that
    drains. The job fails, each node is drained by its Slurm name (n1, n2: not the hostname they share) with
    its rank's failing check as the reason, and `srun python train.py` never runs."""
    try:
        run = sbatch(slurm_two_nodes, tmp_path)
        out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
        assert run.returncode == 1, run.stdout + run.stderr + out
        assert "not training" in out, out
        assert not list(tmp_path.glob("trained.*")), out
        for rank, name in enumerate(NODES):
            state = node(slurm_two_nodes, name)
            assert "DRAIN" in state["State"].split("+"), (name, state, out)
            assert state["Reason"] == f"gpudash preflight: rank {rank} gpu.count: 0 of 8 expected GPUs present", (
                name, state, out,
            )  # fmt: skip
    finally:
        resume(slurm_two_nodes)


def test_the_sbatch_example_trains_when_preflight_passes_under_slurm(slurm_two_nodes, tmp_path):
    run = sbatch(slurm_two_nodes, tmp_path, EXPECT_GPUS="0")  # 0: the GPU count is not checked
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert run.returncode == 0, run.stdout + run.stderr + out
    assert [(f.name, f.read_text()) for f in sorted(tmp_path.glob("trained.*"))] == [
        ("trained.0", "n1"),
        ("trained.1", "n2"),
    ], out
    assert all("DRAIN" not in node(slurm_two_nodes, n)["State"] for n in NODES)
