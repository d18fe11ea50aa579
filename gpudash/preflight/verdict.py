"""Rank 0's verdict over every rank's result: each rank's own faults plus how it differs from the others.

Differences that fail a rank: a driver, torch, CUDA/HIP runtime or gpudash version unlike the majority's
(ties go to rank 0's), a precision that works on another rank with the same device model but not on this
one, and a GPU (by UUID) that two ranks would both train on.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpudash.preflight.rank import problems_of, works

COMPARED_VERSIONS = ("driver", "torch", "cuda", "hip", "gpudash")


def rank_list(ranks: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    ranks = sorted(ranks)
    spans, start = [], None
    for i, r in enumerate(ranks):
        if start is None:
            start = r
        if i + 1 == len(ranks) or ranks[i + 1] != r + 1:
            spans.append(str(start) if start == r else f"{start}-{r}")
            start = None
    return ", ".join(spans)


def _majority(values: dict[int, Any]) -> Any:
    counts = Counter(values.values())
    top = max(counts.values())
    leaders = [v for v, n in counts.items() if n == top]
    return values[min(values)] if values[min(values)] in leaders else leaders[0]


def judge(results: list[dict[str, Any]]) -> dict[int, list[str]]:
    """rank -> its problems (an empty list: the rank passed)."""
    problems = {r["rank"]: problems_of(r) for r in results}
    for key in COMPARED_VERSIONS:
        values = {r["rank"]: r["versions"].get(key) for r in results}
        if len(set(values.values())) > 1:
            usual = _majority(values)
            where = ", ".join(
                f"{v or 'none'} on rank {rank_list([k for k, x in values.items() if x == v])}"
                for v in dict.fromkeys(values.values())
            )
            for rank, value in values.items():
                if value != usual:
                    problems[rank].append(f"{key} {value or 'none'} differs from the other ranks ({where})")
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r["device"]:
            by_model.setdefault(r["device"]["name"], []).append(r)
    for model, group in by_model.items():
        names = sorted({p for r in group for p in r["precisions"]})
        for precision in names:
            good = [r["rank"] for r in group if r["precisions"].get(precision) and works(r["precisions"][precision])]
            if not good:
                continue
            elsewhere = f"works on rank {rank_list(good)} (same {model})"
            for r in group:
                entry = r["precisions"].get(precision)
                if entry is None or works(entry) is not False:
                    continue
                mine = problems[r["rank"]]
                own = next((i for i, p in enumerate(mine) if p.startswith(f"{precision} failed")), None)
                if own is None:
                    mine.append(f"{precision} fails here but {elsewhere}: {entry['reason']}")
                else:
                    mine[own] = f"{precision} failed here but {elsewhere}: {mine[own].split(': ', 1)[1]}"
    owners: dict[tuple[str, str], list[int]] = {}
    for r in results:
        device = r["device"]
        if device and device.get("uuid"):
            owners.setdefault((r["hostname"], device["uuid"]), []).append(r["rank"])
    for (host, uuid), ranks in owners.items():
        if len(ranks) > 1:
            for rank in ranks:
                problems[rank].append(
                    f"shares GPU {uuid} on {host} with rank {rank_list([x for x in ranks if x != rank])}: "
                    "check LOCAL_RANK and CUDA_VISIBLE_DEVICES"
                )
    return problems
