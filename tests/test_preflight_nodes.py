"""Preflight bus bandwidth within each node and across nodes (issue 24 item 2): which node a rank is on
(GPUDASH_PREFLIGHT_NODE, SLURMD_NODENAME, the hostname), the per-node figures and the verdict on made-up
results, then real torchrun runs (gloo, CPU): four ranks that tests/preflight_rank.py's NODES makes two nodes of
two, one node's all_reduce slowed (PLANT_FAULT=slow-allreduce), and two ranks on one node."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from servers import REPO, free_port
from test_preflight_verdicts import H100, rank

from gpudash.contracts.validation import problems
from gpudash.preflight.launcher import node_name
from gpudash.preflight.verdict import assess, bandwidth
from gpudash.render.preflight import bandwidth_lines, text

TESTS = REPO / "tests"
MIB, GIB = 2**20, 2**30


def on_node(
    r: dict, node: str, within: dict | None = None, across: dict | None = None, cpu: dict | None = None
) -> dict:
    """cpu: the host's counters over each within-node size's timed calls (a gloo sweep's), as bandwidth.py records."""
    from test_preflight_verdicts import sweep

    r["node"] = node
    r["collective"]["node_busbw"] = [dict(s, cpu=cpu) for s in sweep(within)]
    r["collective"]["across_busbw"] = sweep(across) if across is not None else None
    return r


def test_a_ranks_node_is_the_override_then_slurms_name_then_the_hostname():
    assert node_name({"GPUDASH_PREFLIGHT_NODE": "rack3-n7", "SLURMD_NODENAME": "n7"}) == "rack3-n7"
    assert node_name({"GPUDASH_PREFLIGHT_NODE": " ", "SLURMD_NODENAME": "n7"}) == "n7"
    assert node_name({}) == socket.gethostname()


def test_each_node_and_across_nodes_is_its_slowest_rank_at_the_largest_size():
    ranks = [on_node(rank(0), "a", {MIB: 5.0, 32 * MIB: 9.0}, {32 * MIB: 3.0}),
             on_node(rank(1), "a", {MIB: 5.0, 32 * MIB: 8.0}),
             on_node(rank(2), "b", {MIB: 5.0, 32 * MIB: 10.0}, {32 * MIB: 2.5}),
             on_node(rank(3), "b", {MIB: 5.0, 32 * MIB: 10.0}),
             on_node(rank(4), "c")]  # fmt: skip
    doc = bandwidth(ranks)
    assert [(n["node"], n["ranks"], n["busbw_gbs"], n["bytes"]) for n in doc["nodes"]] == [
        ("a", [0, 1], 8.0, 32 * MIB), ("b", [2, 3], 10.0, 32 * MIB), ("c", [4], None, None)]  # fmt: skip
    assert doc["nodes"][2]["note"] == "one rank: no within-node all_reduce"
    assert doc["across"] == {"applicable": True, "ranks": [0, 2, 4], "busbw_gbs": None, "bytes": None,
                             "note": "not measured"}  # rank 4 (node c's) has no across sweep here  # fmt: skip
    one = bandwidth([on_node(rank(0), "a", {MIB: 4.0}), on_node(rank(1), "a", {MIB: 4.0})])
    assert (
        one["across"]["applicable"] is False
        and one["across"]["note"] == "not applicable: one node (a), every rank is on it"
    )


def test_a_node_far_below_its_peers_is_named_and_other_shapes_are_not_compared():
    ranks = [on_node(rank(i, host=f"h{i // 2}"), f"n{i // 2}", {32 * MIB: 2.0 if i // 2 == 1 else 10.0})
             for i in range(6)]  # fmt: skip
    ranks += [on_node(rank(6 + i, model=H100), "big", {32 * MIB: 1.0}) for i in range(3)]  # 3 ranks of another part
    found = assess(ranks)
    named = {r: f for r, fs in found.items() for f in fs if f["id"] == "preflight.busbw"}
    assert sorted(named) == [2, 3], found
    assert named[2]["summary"].startswith("within-node all_reduce bus bandwidth on n1 (h1) 2 GB/s is 80% below the "
                                          "median of 3 nodes of 2 ranks (10 GB/s)")  # fmt: skip
    assert named[2]["evidence"]["node"] == "n1" and named[2]["evidence"]["ranks"] == [2, 3]


def counters(busy_s: float, own_s: float, steal_s: float = 0.0, wall_s: float = 1.0, cpus: int = 2) -> dict:
    return {"wall_s": wall_s, "busy_s": busy_s, "steal_s": steal_s, "own_s": own_s, "cpus": float(cpus)}


def three_nodes(slow_cpu: dict | None, cpu: dict | None, hosts=("h0", "h1", "h2")) -> list[dict]:
    """Nodes n0-n2 of two ranks each on `hosts`; n1 sweeps at a fifth of the others' rate, its ranks' counters
    slow_cpu, the others' cpu."""
    return [on_node(rank(i, host=hosts[i // 2]), f"n{i // 2}", {32 * MIB: 2.0 if i // 2 == 1 else 10.0},
                    cpu=slow_cpu if i // 2 == 1 else cpu) for i in range(6)]  # fmt: skip


def test_a_slow_node_whose_cpus_other_programs_shared_is_a_warning_that_says_so():
    """A gloo sweep on the CPU: what the job's ranks on the host did not take themselves, other programs did. A
    node slowed while they took 45 % of its CPU describes the neighbours, as a contended matmul rate does: WARN,
    with the reason, where a quiet node that slow fails."""
    quiet = counters(busy_s=1.0, own_s=0.5)  # two ranks of 2 CPUs over 1 s: all the busy time is the job's
    busy = counters(busy_s=1.9, own_s=0.5)  # 0.9 s of 2 CPU-seconds someone else's
    found = assess(three_nodes(busy, quiet))
    named = {r: f for r, fs in found.items() for f in fs if f["id"] == "preflight.busbw"}
    assert sorted(named) == [2, 3] and {f["severity"] for f in named.values()} == {"WARN"}, found
    assert named[2]["summary"].endswith(
        "below the median of 3 nodes of 2 ranks (10 GB/s) (measured under other load: other programs took 45% of "
        "h1's CPU)"
    )
    assert named[2]["evidence"]["contended"] == "other programs took 45% of h1's CPU"
    doc = bandwidth(three_nodes(busy, quiet))
    assert [n["contended"] for n in doc["nodes"]] == [None, "other programs took 45% of h1's CPU", None]
    assert "  within n1 (h1), rank 2-3: 2 GB/s at 32 MiB (under other load: other programs took 45% of h1's CPU)" in (
        bandwidth_lines(doc)
    )
    failed = assess(three_nodes(quiet, quiet))
    assert {f["severity"] for f in failed[2] if f["id"] == "preflight.busbw"} == {"CRITICAL"}
    stolen = assess(three_nodes(counters(busy_s=1.0, own_s=0.5, steal_s=0.3), quiet))
    assert stolen[2][0]["severity"] == "WARN" and stolen[2][0]["summary"].endswith(
        "(measured under other load: the hypervisor took 15% of h1's CPU (steal time))"
    )


def test_nodes_sharing_a_host_are_not_each_others_other_load():
    """Two nodes on one host (slurmd's multiple-slurmd set-up, or GPUDASH_PREFLIGHT_NODE splitting a host) sweep at
    once on its CPUs: every rank's own time there is the job's, so a slow node is still a failure; a GPU sweep
    (no counters) is never called contended; and a share within what whole clock ticks can add is not load."""
    theirs = counters(busy_s=1.96, own_s=0.32)  # six ranks on one host of 2 CPUs, all of its busy time theirs
    found = assess(three_nodes(theirs, theirs, hosts=("vm", "vm", "vm")))
    assert {f["severity"] for f in found[2] if f["id"] == "preflight.busbw"} == {"CRITICAL"}, found
    assert not any(f["id"] == "preflight.busbw" for r in (0, 1, 4, 5) for f in found[r])
    gpu = assess(three_nodes(None, None))
    assert {f["severity"] for f in gpu[2] if f["id"] == "preflight.busbw"} == {"CRITICAL"}
    # 20 ms on 2 CPUs: one stray tick is 25 % of it, and 3 + 2 ticks of doubt cover it
    short = counters(busy_s=0.02 + 0.01, own_s=0.01, wall_s=0.02)
    assert bandwidth(three_nodes(short, short))["nodes"][1]["contended"] is None


def test_the_published_floor_applies_to_each_node_of_eight_in_a_bigger_job():
    """Two nodes of 8 H100s: each node's within-node figure at 16 GiB against the 460 GB/s floor (before, the
    floor applied only when the whole job was one node)."""
    ranks = [on_node(rank(i, model=H100, host=f"h{i // 8}"), f"h{i // 8}", {16 * GIB: 400.0 if i >= 8 else 470.0})
             for i in range(16)]  # fmt: skip
    found = assess(ranks)
    floors = {r for r, fs in found.items() for f in fs if "published floor of 460 GB/s for 8xH100 SXM" in f["summary"]}
    assert floors == set(range(8, 16)), found
    seven = [on_node(rank(i, model=H100), "h", {16 * GIB: 400.0}) for i in range(7)]  # not a node of that kind
    assert not any(f["id"] == "preflight.busbw" for fs in assess(seven).values() for f in fs)


# Real runs --------------------------------------------------------------------------------------------------


def torchrun(ranks: int, *args: str, **env: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
               OMP_NUM_THREADS="1", **env)  # fmt: skip
    env.pop("GPUDASH_PREFLIGHT_NODE", None)  # each rank's node: NODES, else the hostname
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-addr", "127.0.0.1",
         "--master-port", str(free_port()), str(TESTS / "preflight_rank.py"), "preflight", "--no-checks", "--no-speed",
         "--precisions", "fp32", "--json", *args],
        env=env, capture_output=True, text=True, timeout=240, cwd=REPO,
    )  # fmt: skip


def test_two_nodes_of_two_ranks_each_with_one_slow_node_named():
    """Ranks 0-1 are node-a and 2-3 node-b; rank 3 pauses after each of its within-node all_reduce calls (three
    times the call's time), so node-b's within-node bus bandwidth is about a quarter of node-a's: node-b is named on
    both its ranks, node-a is not, and the across-node figure (ranks 0 and 2) is there."""
    nodes = json.dumps({"0": "node-a", "1": "node-a", "2": "node-b", "3": "node-b"})
    run = torchrun(4, NODES=nodes, PLANT_RANK="3", PLANT_FAULT="slow-allreduce")
    doc = json.loads(run.stdout)
    assert problems("preflight", doc) == [], run.stderr
    assert [r["node"] for r in doc["ranks"]] == ["node-a", "node-a", "node-b", "node-b"]
    a, b = doc["bandwidth"]["nodes"]
    assert (a["node"], a["ranks"], b["node"], b["ranks"]) == ("node-a", [0, 1], "node-b", [2, 3])
    assert a["busbw_gbs"] > 0 and b["busbw_gbs"] > 0 and a["bytes"] == b["bytes"] == 32 * MIB, doc["bandwidth"]
    across = doc["bandwidth"]["across"]
    assert across["applicable"] and across["ranks"] == [0, 2] and across["busbw_gbs"] > 0, across
    named = {r["rank"] for r in doc["ranks"] for f in r["findings"] if f["id"] == "preflight.busbw"}
    finding = next(f for f in doc["ranks"][2]["findings"] if f["id"] == "preflight.busbw")
    assert finding["summary"].startswith("within-node all_reduce bus bandwidth on node-b (")
    assert "below the median of 2 nodes of 2 ranks" in finding["summary"]
    # Other programs on this machine (a second test run, say) can share the sweep's CPUs: then the figure is only
    # a hint, a WARN that says so (test_a_slow_node_whose_cpus_other_programs_shared_is_a_warning_that_says_so).
    if b["contended"]:
        assert (
            named == {2, 3} and finding["severity"] == "WARN" and "(measured under other load: " in finding["summary"]
        )
    else:
        assert named == {2, 3} and doc["failed_ranks"] == [2, 3] and run.returncode == 1, doc["bandwidth"]
    table = text(doc)
    assert "  within node-a (" in table and "), rank 0-1: " in table and "  within node-b (" in table
    assert "  across nodes, rank 0, 2 (one per node): " in table and " GB/s at 32 MiB" in table


def test_one_node_says_across_nodes_is_not_applicable():
    run = torchrun(2)
    doc = json.loads(run.stdout)
    assert problems("preflight", doc) == [] and run.returncode == 0, run.stderr
    (node,) = doc["bandwidth"]["nodes"]
    assert node["ranks"] == [0, 1] and node["busbw_gbs"] > 0  # the node's sweep is the world's
    assert all(r["collective"]["node_busbw"] == r["collective"]["busbw"] for r in doc["ranks"])
    # Each size's timed calls carry the host's CPU counters (a gloo sweep): the rank's own process was busy
    for r in doc["ranks"]:
        cpu = max(r["collective"]["busbw"], key=lambda s: s["bytes"])["cpu"]
        assert cpu["wall_s"] > 0 and cpu["own_s"] > 0 and cpu["busy_s"] > 0 and cpu["cpus"] >= 1, cpu
    assert doc["bandwidth"]["across"]["applicable"] is False
    assert f"  across nodes: not applicable: one node ({node['node']}), every rank is on it" in text(doc)
