"""Whether a node's within-node all_reduce shared its hosts' CPUs with programs outside the job.

A gloo sweep on CPU tensors runs on the host's cores, and so do its peers' sweeps on that host (every node
measures at once): each rank's counters (bandwidth.py, a sweep entry's cpu) hold the host's busy time over its
timed calls, its own process's time and the host's steal. What the job's ranks on that host did not take
themselves was other programs' (or the hypervisor's). With enough of it the figure describes the neighbours, as
a contended matmul rate does (preflight.speed): the verdict then says so and warns, where it would fail the node.
Judged as the benchmark's rounds are (measure/bench/tasks/contention.judged: over a tenth of the CPU taken by
others, or 5 % stolen, beyond what whole clock ticks can add).
"""

from __future__ import annotations

from typing import Any


def _entry(rank: dict[str, Any], size: int) -> dict[str, Any] | None:
    sweep = (rank.get("collective") or {}).get("node_busbw") or []
    return next((s for s in sweep if s.get("bytes") == size), None)


def other_load(results: list[dict[str, Any]], node_ranks: list[int], size: int) -> str | None:
    """Why the node's sweep at `size` counts as measured under other load (the first of its ranks that saw it),
    or None: quiet, or not measured on CPUs (a GPU sweep has no counters)."""
    # Here, not at the top: gpudash.measure.bench's package costs 68 ms to import, and the preflight's table
    # (render/preflight.py, through verdict.rank_list) needs none of it.
    from gpudash.measure.bench.tasks.contention import judged

    by_rank = {r["rank"]: r for r in results}
    for rank in node_ranks:
        mine = _entry(by_rank[rank], size)
        cpu = (mine or {}).get("cpu")
        if not cpu or cpu["wall_s"] <= 0:
            continue
        # The job's ranks on this host sweep at once, this size in step with this rank's (one collective each).
        host = by_rank[rank]["hostname"]
        beside = [(_entry(r, size) or {}).get("cpu") for r in results if r["hostname"] == host]
        job_s = sum(c["own_s"] for c in beside if c)
        # Each rank's own counter moves in whole ticks, and one tick more, as the benchmark's round allows.
        seen = judged(cpu["busy_s"], cpu["steal_s"], job_s, cpu["wall_s"], cpu["cpus"], own_counters=len(beside) + 1)
        if seen.over == "others":
            return f"other programs took {seen.others:.0%} of {host}'s CPU"
        if seen.over == "steal":
            return f"the hypervisor took {seen.steal:.0%} of {host}'s CPU (steal time)"
    return None
