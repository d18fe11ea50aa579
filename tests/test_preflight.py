"""gpudash preflight: the launcher's variables, the verdict over ranks, and real runs: one process, two
processes under torchrun (gloo) with a fault planted on rank 1, and two processes started the way srun would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from servers import REPO, free_port

from gpudash.cli import main
from gpudash.contracts.validation import problems
from gpudash.errors import UsageError
from gpudash.measure import probe
from gpudash.preflight.launcher import detect
from gpudash.preflight.slurm import first_host, job_port
from gpudash.preflight.verdict import judge, rank_list
from gpudash.render.preflight import text

TESTS = REPO / "tests"


# Launchers -------------------------------------------------------------------------------------------------


def test_torchrun_variables_win_even_under_srun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "MASTER_ADDR": "n1", "MASTER_PORT": "29500",
           "SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2"}  # fmt: skip
    world = detect(env)
    assert (world.launcher, world.rank, world.world_size, world.local_rank) == ("torchrun", 3, 8, 3)
    assert (world.master_addr, world.master_port) == ("n1", 29500)


def test_srun_alone_finds_rank_0_on_the_first_node():
    env = {"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "16", "SLURM_LOCALID": "1", "SLURM_JOB_ID": "4242",
           "SLURM_STEP_ID": "0", "SLURM_STEP_NODELIST": "gpu[07-09,12],login1"}  # fmt: skip
    world = detect(env)
    assert (world.launcher, world.rank, world.world_size, world.local_rank) == ("srun", 5, 16, 1)
    assert world.master_addr == "gpu07" and world.master_port == job_port("4242", "0")
    assert job_port("4242", "1") != job_port("4242", "0")  # two steps of one job do not collide


def test_a_batch_script_without_srun_checks_one_process_and_says_so():
    world = detect({"SLURM_JOB_ID": "7", "SLURM_NTASKS": "8", "SLURM_PROCID": "0"})
    assert (world.launcher, world.world_size) == ("none", 1)
    assert "not an srun step" in world.notes[0] and "srun gpudash preflight" in world.notes[0]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RANK": "0", "WORLD_SIZE": "two"}, "WORLD_SIZE='two': expected a whole number"),
        ({"RANK": "0", "WORLD_SIZE": "2"}, "MASTER_ADDR/MASTER_PORT are not"),
        ({"RANK": "4", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "1"}, "rank 4 is outside the world of 2"),
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "70000"}, "MASTER_PORT=70000"),
    ],
)
def test_bad_launcher_variables_are_named(env, message):
    with pytest.raises(UsageError, match=message):
        detect(env)


@pytest.mark.parametrize(
    ("nodelist", "first"),
    [("node01", "node01"), ("node[01-04,07],gpu5", "node01"), ("a,b", "a"), ("rack[2-3]-n[10-12]", "rack2-n10"),
     ("gpu[007]", "gpu007"), ("", None)],
)  # fmt: skip
def test_first_host_of_a_slurm_nodelist(nodelist, first):
    assert first_host(nodelist) == first


# The verdict -----------------------------------------------------------------------------------------------


def rank(n, host="h", model="NVIDIA H100 80GB HBM3", uuid=None, torch="2.5.1", driver="550.54", **precisions):
    return {
        "rank": n,
        "hostname": host,
        "device": {"key": f"nvidia:{n}", "name": model, "uuid": uuid or f"GPU-{n}"},
        "device_error": None,
        "versions": {"torch": torch, "driver": driver, "cuda": "12.4", "hip": None, "gpudash": "0.1.0"},
        "precisions": {
            p: {"verdict": v, "spec": "absent", "torch": None, "reason": f"{p} {v} here"} for p, v in precisions.items()
        },
        "checks": [],
        "collective": None,
    }


def test_the_odd_driver_out_fails_and_is_named():
    problems = judge([rank(i, driver="550.54") for i in range(3)] + [rank(3, driver="535.104")])
    assert problems[0] == problems[1] == problems[2] == []
    assert problems[3] == ["driver 535.104 differs from the other ranks (550.54 on rank 0-2, 535.104 on rank 3)"]


def test_a_precision_that_works_on_the_same_model_elsewhere():
    problems = judge([rank(0, fp4="verified"), rank(1, fp4="failed"), rank(2, model="other", fp4="failed")])
    assert problems[1] == ["fp4 fails here but works on rank 0 (same NVIDIA H100 80GB HBM3): fp4 failed here"]
    assert problems[2] == []  # another model: fp4 is absent there, its failure is expected


def test_two_ranks_on_one_gpu():
    problems = judge([rank(0, uuid="GPU-a"), rank(1, uuid="GPU-a"), rank(2, host="other", uuid="GPU-a")])
    assert "shares GPU GPU-a on h with rank 1" in problems[0][0] and problems[2] == []


def test_rank_lists_read_like_ranges():
    assert rank_list([5, 0, 1, 2, 7, 8]) == "0-2, 5, 7-8"


# Real runs -------------------------------------------------------------------------------------------------


def planted_env(rank_with_fault: int, fault: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")])),
        PLANT_RANK=str(rank_with_fault),
        PLANT_FAULT=fault,
    )
    return env


def test_one_process_without_a_launcher_reports_its_own_fault_as_json(monkeypatch, capsys):
    monkeypatch.setattr(probe, "TASK_TARGET", "probe_faults:run_probe")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("GPUDASH_PROBE_FAULT", "fp32=matmul_nan")
    for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS"):
        monkeypatch.delenv(name, raising=False)
    code = main(["preflight", "--json", "--precisions", "fp32,fp64", "--no-checks"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1 and doc["ok"] is False and doc["failed_ranks"] == [0]
    assert (doc["launcher"], doc["world_size"]) == ("none", 1)
    assert problems("preflight", doc) == []  # gpudash/contracts/preflight.schema.json
    (only,) = doc["ranks"]
    assert only["device"]["key"] == "cpu:0" and only["precisions"]["fp64"]["verdict"] == "verified"
    assert only["problems"] == [f"fp32 failed (native): {only['precisions']['fp32']['reason']}"]
    assert "NaN" in only["problems"][0]


def test_torchrun_two_ranks_with_a_fault_on_rank_1():
    """bf16 gives zeros and fp16 hangs on rank 1 only: the job must stop, naming rank 1, within the limits."""
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
         "--master-port", str(free_port()), str(TESTS / "preflight_rank.py"), "preflight", "--precisions", "fp32,bf16,fp16",
         "--timeout", "5", "--no-checks"],
        env=planted_env(1, "bf16=conversion_zeros,fp16=hang"), capture_output=True, text=True, timeout=240, cwd=REPO,
    )  # fmt: skip
    assert run.returncode != 0, run.stdout + run.stderr
    out = run.stdout
    assert out.startswith("gpudash preflight · 2 ranks (torchrun, gloo) · FAILED on rank 1"), out + run.stderr
    rows = {line.split()[0]: line for line in out.splitlines()[2:4]}
    assert rows["0"].endswith(" ok") and "fp32 ✓ fp16 ✓ bf16 ✓" in rows["0"]
    assert rows["1"].endswith("FAILED") and "fp16 ✗ bf16 ✗" in rows["1"] and "gloo ok" in rows["1"]
    problems = [line.strip() for line in out.splitlines() if line.startswith("  rank") and " CRITICAL " in line]
    assert all(p.startswith("rank 1: CRITICAL numerics.precision (drain): ") for p in problems), out
    assert len(problems) == 2, out
    assert "bf16 failed here but works on rank 0" in problems[0] + problems[1]
    assert any("fp16 failed" in p and "probe hung: timed out after 5 s" in p for p in problems)
    assert "gpudash preflight: failed on rank 1" in run.stderr


def test_two_processes_started_as_srun_would():
    port = free_port()
    procs = []
    for r in range(2):
        env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
        env.update(OMP_NUM_THREADS="1", SLURM_PROCID=str(r), SLURM_STEP_NUM_TASKS="2", SLURM_LOCALID=str(r), SLURM_JOB_ID="1",
                   SLURM_STEP_ID="0", SLURM_STEP_NODELIST="127.0.0.1", MASTER_PORT=str(port))  # fmt: skip
        command = [sys.executable, "-m", "gpudash", "preflight", "--json", "--precisions", "fp32", "--no-checks"]
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        procs.append(subprocess.Popen(command, env=env, text=True, cwd=REPO, **pipes))
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    doc = json.loads(outs[0][0])
    assert outs[1][0] == ""  # only rank 0 prints
    assert (doc["launcher"], doc["world_size"], doc["backend"], doc["ok"]) == ("srun", 2, "gloo", True)
    assert [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert all(r["collective"]["ok"] and r["precisions"]["fp32"]["verified"] for r in doc["ranks"])


def test_preflight_refuses_a_replay(capsys):
    assert main(["--replay", str(REPO / "examples/snapshots/h100-80gb.json"), "preflight"]) == 2
    assert "preflight checks the devices this job really runs on" in capsys.readouterr().err


def test_text_names_every_problem_by_rank():
    doc = {"world_size": 2, "launcher": "srun", "backend": "nccl", "ok": False, "failed_ranks": [1], "notes": [],
           "ranks": [{**rank(0, fp16="verified"), "problems": [], "ok": True},
                     {**rank(1, fp16="failed"), "problems": ["fp16 failed"], "ok": False}]}  # fmt: skip
    out = text(doc)
    assert out.splitlines()[0] == "gpudash preflight · 2 ranks (srun, nccl) · FAILED on rank 1"
    assert "  rank 1: CRITICAL preflight (none): fp16 failed" in out
