"""gpudash preflight under a real Slurm (issue 24 item 6): munged, slurmctld and slurmd from Debian's slurm-wlm
on localhost (tests/slurm_cluster.py; .ci/run installs slurm-wlm and munge), `srun -n N gpudash preflight` on
CPU ranks with gloo, the port derived from the job and step ids (no MASTER_PORT), a planted slow rank and a
planted fingerprint difference (tests/preflight_rank.py, tests/preflight_faults.py)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import slurm_cluster
from servers import REPO
from test_preflight_failures import DEFAULT_STALL_S, SHORT_STALL, stopped_detail

from gpudash.preflight.slurm import PORT_BASE, PORT_SPAN, ephemeral_range, job_port

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    with slurm_cluster.cluster_or_skip(tmp_path_factory.mktemp("slurm")) as env:
        yield dict(env, OMP_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "tests"), os.environ.get("PYTHONPATH")])))  # fmt: skip


@pytest.fixture(scope="module")
def slurm_two_nodes(slurm_two_node_cluster):
    """Two Slurm nodes, n1 and n2, each its own slurmd on this host (tests/slurm_cluster.py; the session's
    cluster, tests/conftest.py)."""
    return dict(slurm_two_node_cluster, OMP_NUM_THREADS="1")


def srun(env: dict[str, str], tasks: int, *command: str, kill_on_bad_exit: int = 0, nodes: int | None = None,
         **plant: str) -> subprocess.CompletedProcess:  # fmt: skip
    env = {k: v for k, v in env.items()
           if k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "GPUDASH_PREFLIGHT_NODE")}  # fmt: skip
    env.update(plant)
    spread = ["-N", str(nodes)] if nodes else []
    # --time=4: Slurm's own limit ends the step (and every task) should a test's srun not, so nothing outlives it.
    return subprocess.run(["srun", *spread, "-n", str(tasks), "--overcommit", "--time=4",
                           f"--kill-on-bad-exit={kill_on_bad_exit}", *command], env=env,
                          capture_output=True, text=True, timeout=300, cwd=REPO)  # fmt: skip


def test_derived_ports_stay_below_the_ephemeral_range():
    low = (ephemeral_range() or (32768, 60999))[0]
    assert PORT_BASE + PORT_SPAN <= 32768 <= low or low >= PORT_BASE + PORT_SPAN
    assert all(PORT_BASE <= job_port(str(job), str(step)) < low for job in range(0, 5000, 7) for step in range(3))


def test_srun_gpudash_preflight_passes_on_two_cpu_ranks(slurm):
    run = srun(slurm, 2, str(BIN / "gpudash"), "preflight", "--json", "--no-checks", "--precisions", "fp32")
    assert run.returncode == 0, run.stdout + run.stderr
    doc = json.loads(run.stdout)
    assert (doc["launcher"], doc["world_size"], doc["backend"], doc["ok"]) == ("srun", 2, "gloo", True)
    assert all(r["collective"]["ok"] and r["collective"]["busbw"] for r in doc["ranks"])
    (node,) = doc["bandwidth"]["nodes"]  # one Slurm node: its name (SLURMD_NODENAME), across nodes said to be n/a
    assert node["node"] == socket.gethostname().split(".")[0] and node["ranks"] == [0, 1]
    assert doc["bandwidth"]["across"]["applicable"] is False


def test_srun_over_two_slurm_nodes_splits_the_bus_bandwidth_by_slurms_node_names(slurm_two_nodes):
    """srun -N 2 -n 4: tasks 0-1 on n1 and 2-3 on n2 (Slurm's block distribution), both slurmd on this host, so
    every task has the same hostname: the within-node groups follow SLURMD_NODENAME, and the across-node figure
    is ranks 0 and 2's. MASTER_ADDR is exported as a job script would, since n1 is no name this host resolves."""
    run = srun(slurm_two_nodes, 4, str(BIN / "gpudash"), "preflight", "--json", "--no-checks", "--no-speed",
               "--precisions", "fp32", nodes=2, MASTER_ADDR="127.0.0.1")  # fmt: skip
    doc = json.loads(run.stdout or "{}")
    # The two nodes are alike; other programs on this machine (a second test run) may share their CPUs and slow
    # one, which is then a WARN that says so, not a failure (tests/test_preflight_nodes.py)
    assert run.returncode == 0 and doc["ok"], run.stdout + run.stderr
    assert [r["node"] for r in doc["ranks"]] == ["n1", "n1", "n2", "n2"]
    assert len({r["hostname"] for r in doc["ranks"]}) == 1
    a, b = doc["bandwidth"]["nodes"]
    assert (a["node"], a["ranks"], b["node"], b["ranks"]) == ("n1", [0, 1], "n2", [2, 3])
    assert a["busbw_gbs"] > 0 and b["busbw_gbs"] > 0, doc["bandwidth"]
    across = doc["bandwidth"]["across"]
    assert across["applicable"] and across["ranks"] == [0, 2] and across["busbw_gbs"] > 0, across


def test_srun_names_a_rank_slowed_to_half_speed(slurm):
    run = srun(slurm, 2, str(BIN / "python"), "tests/preflight_rank.py", "preflight", "--no-checks", "--precisions",
               "fp32,bf16", PLANT_RANK="1", PLANT_FAULT="slow")  # fmt: skip
    assert "rank 0: CRITICAL" not in run.stdout, run.stdout + run.stderr
    if "  rank 1: CRITICAL preflight.speed (drain): " in run.stdout:
        assert run.returncode == 1 and run.stdout.startswith(
            "gpudash preflight · 2 ranks (srun, gloo) · FAILED on rank 1"
        )
    else:  # both ranks time the same cores: on a busy machine the rate is contended, and only a WARN
        assert "  rank 1: WARN preflight.speed" in run.stdout and "(measured under other load)" in run.stdout


def test_srun_names_a_rank_whose_fingerprint_differs_by_one_bit(slurm):
    run = srun(slurm, 3, str(BIN / "python"), "tests/preflight_rank.py", "preflight", "--json", "--no-checks",
               "--precisions", "fp32", PLANT_RANK="2", PLANT_FAULT="bitflip")  # fmt: skip
    doc = json.loads(run.stdout)
    named = {r["rank"] for r in doc["ranks"] for f in r["findings"] if f["id"] == "preflight.fingerprint"}
    assert named == {2} and 2 in doc["failed_ranks"] and run.returncode == 1, run.stdout + run.stderr


def test_a_stopped_rank_ends_the_srun_step_within_3_minutes_with_kill_on_bad_exit(slurm):
    """Issue 24 item 5 under srun, with docs/fleet.md's invocation: rank 1 stops itself (SIGSTOP) once joined;
    rank 0 names it after --stall, prints the table and exits 1, and srun's --kill-on-bad-exit=1 ends the step
    (without it srun would wait for the stopped task forever). Run with --stall 5: --stall bounds one wait on
    this path, so the defaults' step (--stall 30) takes 25 s more, and that is what must fit in 3 minutes
    (tests/test_preflight_failures.py, SHORT_STALL, says why and pins the default)."""
    started = time.monotonic()
    run = srun(slurm, 2, str(BIN / "python"), "tests/preflight_rank.py", "preflight", "--no-checks", "--precisions",
               "fp32", "--stall", str(SHORT_STALL), kill_on_bad_exit=1, PLANT_RANK="1", PLANT_FAULT="stop")  # fmt: skip
    took = time.monotonic() - started
    with_defaults = took + DEFAULT_STALL_S - SHORT_STALL
    assert with_defaults < 180, (
        f"the step took {took:.0f} s with --stall {SHORT_STALL}: {with_defaults:.0f} s with the defaults"
    )
    assert run.returncode != 0, run.stdout + run.stderr
    assert run.stdout.startswith("gpudash preflight · 2 ranks (srun, gloo) · FAILED on rank 1"), run.stdout + run.stderr
    stopped_detail(run.stdout, 1, SHORT_STALL)
    assert "rank 1 stopped answering: srun ends the step only if launched with --kill-on-bad-exit=1" in run.stderr
    assert "task 0: Exited with exit code 1" in run.stderr, run.stderr


def test_rank_0_killed_under_srun_is_named_by_rank_1(slurm):
    """Rank 0 starts the store in a process of its own, which outlives it: rank 0 does its checks, then SIGKILLs
    itself as it would post its result; srun (--kill-on-bad-exit=1) ends the step, and rank 1, within its
    SIGTERM's grace, prints the table naming rank 0. Before, rank 0 took the store with it and no table came."""
    started = time.monotonic()
    run = srun(slurm, 2, str(BIN / "python"), "tests/preflight_rank.py", "preflight", "--no-checks", "--no-speed",
               "--precisions", "fp32", kill_on_bad_exit=1, PLANT_RANK="0", PLANT_FAULT="kill-at-result")  # fmt: skip
    assert time.monotonic() - started < 60, run.stdout + run.stderr
    assert run.stdout.startswith("gpudash preflight · 2 ranks (srun, gloo) · FAILED on rank 0"), run.stdout + run.stderr
    assert "rank 0: CRITICAL preflight.lost (drain): died: its process ended without a word" in run.stdout
    assert "task 0: Killed" in run.stderr, run.stderr
    # Rank 1 exits 1 once the table is out; srun's SIGTERM can still reach it while the interpreter shuts down,
    # after Python has put the default handlers back (CI saw "task 1: Terminated" after rank 1's last line).
    assert "gpudash preflight: failed on rank 0" in run.stderr, run.stderr
    assert re.search(r"task 1: (Exited with exit code 1|Terminated)\n", run.stderr), run.stderr


def test_a_rank_waiting_for_the_store_when_srun_ends_the_step_says_so(slurm, tmp_path):
    """Rank 0 is killed in its first seconds, before it starts the store, while rank 1 waits for it; srun
    (--kill-on-bad-exit=1) ends the step with SIGTERM, and rank 1 says in one line that it was stopped while it
    waited for rank 0's store, exit 3, no traceback. Before, torch's connect held rank 1's SIGTERM handling until
    --wait ran out, and Slurm's SIGKILL ended it after KillWait without a word."""
    flag = tmp_path / "waiting"
    started = time.monotonic()
    run = srun(slurm, 2, str(BIN / "python"), "tests/preflight_rank.py", "preflight", "--no-checks", "--no-speed",
               "--precisions", "fp32", kill_on_bad_exit=1, PLANT_RANK="0", PLANT_FAULT="end-before-store",
               PLANT_FLAG=str(flag))  # fmt: skip
    assert time.monotonic() - started < 60, run.stdout + run.stderr
    assert flag.exists() and run.stdout == "", run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "task 0: Killed" in run.stderr and "task 1: Exited with exit code 3" in run.stderr, run.stderr
    assert (
        "gpudash: error: rank 1: the launcher stopped this rank (SIGTERM) while it waited for rank 0's store at "
        in run.stderr
    ), run.stderr
