"""The verdict over every rank's result: each rank's own faults, then how it compares with its peers.

Every finding carries the health contract's fields (docs/health.md): a stable check ID, a severity (WARN or
CRITICAL; a CRITICAL fails the rank), the action it recommends, and the evidence. What fails a rank:

- its own faults: no device, a probe that failed on a precision its spec or torch says it has
  (numerics.precision), a failed plugin check, a failed collective, a health check (gpu.count against
  --expect-gpus, the GPU's counters);
- drift: a driver, torch, CUDA/HIP, NCCL/RCCL or gpudash version unlike the majority's, or a VBIOS unlike that of
  the majority of the ranks with the same GPU model (ties go to the lowest rank's), a precision that works on another rank of the same model but not here, a GPU two ranks share;
- speed: a matmul rate per precision below the median of its same-model peers (WARN beyond speed_warn_pct,
  CRITICAL beyond speed_fail_pct; the gap to the best is in the evidence), or below the part's published MAMF;
- numerics: a fingerprint unlike the majority of the ranks with the same model, software and thread count;
- collectives: a node whose within-node all_reduce bus bandwidth is far below that of its peers (nodes of as
  many ranks of the same model), or below the published floor for a node of its kind (only a WARN where other
  programs shared the node's CPUs during a gloo sweep: host_load.py).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from gpudash.health.catalog import CATALOG, CRITICAL, NONE, WARN
from gpudash.preflight.host_load import other_load
from gpudash.preflight.rank import EXPECTED, works

COMPARED_VERSIONS = ("driver", "torch", "cuda", "hip", "nccl", "gpudash")
# Facts of the rank's device compared among the ranks with the same model (a VBIOS is per board: an H100's is not
# an A100's); a device that does not report one (None) is left out, as unknown is not different.
COMPARED_DEVICE_FACTS = ("vbios",)


@dataclass(frozen=True)
class Limits:
    speed_warn_pct: float = 5.0  # below the same-model median: WARN
    speed_fail_pct: float = 20.0  # below the same-model median: CRITICAL
    mamf_fail_pct: float = 20.0  # below the part's published MAMF: WARN (a preflight shape is not MAMF's)
    busbw_fail_pct: float = 20.0  # a node's bus bandwidth below its peers' median ("20% below: misconfigured")


def finding(check_id: str, severity: str, summary: str, evidence: dict[str, Any] | None = None,
            action: str | None = None) -> dict[str, Any]:  # fmt: skip
    """One result in the health contract's form (the ID must be in the health catalog)."""
    spec = CATALOG[check_id]
    return {"id": check_id, "severity": severity, "summary": summary, "action": action or spec.action,
            "evidence": dict(evidence or {})}  # fmt: skip


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


def _differs(found: dict[int, list], key: str, values: dict[int, Any], others: str, evidence: dict[str, Any]) -> None:
    """A CRITICAL preflight.drift for each rank whose `key` differs from the majority's, when any differs."""
    if len(set(values.values())) < 2:
        return
    usual = _majority(values)
    where = ", ".join(
        f"{v or 'none'} on rank {rank_list([k for k, x in values.items() if x == v])}"
        for v in dict.fromkeys(values.values())
    )
    for rank, value in values.items():
        if value != usual:
            found[rank].append(finding("preflight.drift", CRITICAL,
                                       f"{key} {value or 'none'} differs from {others} ({where})",
                                       {"what": key, "here": value, "usual": usual, **evidence}))  # fmt: skip


def _majority(values: dict[int, Any]) -> Any:
    counts = Counter(values.values())
    top = max(counts.values())
    leaders = [v for v, n in counts.items() if n == top]
    return values[min(values)] if values[min(values)] in leaders else leaders[0]


def own_findings(result: dict[str, Any]) -> list[dict[str, Any]]:
    """This rank's own faults (differences from other ranks are added by assess)."""
    out = []
    if result["device"] is None:
        out.append(finding("preflight.setup", CRITICAL, f"no device: {result['device_error']}"))
    for precision, p in result["precisions"].items():
        if p["verdict"] == "failed" and (p["spec"] in EXPECTED or p["torch"] is True):
            out.append(finding("numerics.precision", CRITICAL,
                               f"{precision} failed ({p['spec'] or 'no spec'}): {p['reason']}",
                               {"precision": precision, "spec": p["spec"]}))  # fmt: skip
    for c in result["checks"]:
        if c["status"] in ("fail", "error"):
            out.append(finding("preflight.check", CRITICAL, f"check {c['plugin']}/{c['check']} {c['status']}: "
                               f"{c['summary']}", {"plugin": c["plugin"], "check": c["check"]}))  # fmt: skip
    collective = result.get("collective")
    if collective and not collective["ok"]:
        out.append(finding("preflight.collective", CRITICAL,
                           f"{collective['backend']} all_reduce failed: {collective['error']}"))  # fmt: skip
    for h in result.get("health", []):
        if h["severity"] in (WARN, CRITICAL):
            out.append({k: h[k] for k in ("id", "severity", "summary", "action", "evidence")})
    return out


def _drift(results: list[dict[str, Any]], found: dict[int, list]) -> None:
    for key in COMPARED_VERSIONS:
        _differs(found, key, {r["rank"]: r["versions"].get(key) for r in results}, "the other ranks", {})
    for model, group in _by_model(results).items():
        for key in COMPARED_DEVICE_FACTS:
            facts = {r["rank"]: r["device"].get(key) for r in group if r["device"].get(key)}
            _differs(found, key, facts, f"the other {model} ranks", {"model": model})
    health = {r["rank"]: sorted(h["id"] for h in r.get("health", []) if h["severity"] in (WARN, CRITICAL))
              for r in results}  # fmt: skip
    if len({tuple(v) for v in health.values()}) > 1:
        clean = [r for r, ids in health.items() if not ids]
        for rank, ids in health.items():
            if ids and clean:
                found[rank].append(
                    finding(
                        "preflight.drift",
                        WARN,
                        f"health checks fail here ({', '.join(ids)}) but pass on rank {rank_list(clean)}",
                        {"what": "health", "here": ids},
                    )
                )


def _by_model(results: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        if r["device"]:
            groups.setdefault(r["device"]["name"], []).append(r)
    return groups


def _precisions_elsewhere(results: list[dict[str, Any]], found: dict[int, list]) -> None:
    for model, group in _by_model(results).items():
        for precision in sorted({p for r in group for p in r["precisions"]}):
            good = [r["rank"] for r in group if r["precisions"].get(precision) and works(r["precisions"][precision])]
            if not good:
                continue
            elsewhere = f"works on rank {rank_list(good)} (same {model})"
            for r in group:
                entry = r["precisions"].get(precision)
                if entry is None or works(entry) is not False:
                    continue
                mine = found[r["rank"]]
                own = next((f for f in mine if f["summary"].startswith(f"{precision} failed")), None)
                if own is None:
                    mine.append(finding("numerics.precision", CRITICAL,
                                        f"{precision} fails here but {elsewhere}: {entry['reason']}"))  # fmt: skip
                else:
                    own["summary"] = f"{precision} failed here but {elsewhere}: {own['summary'].split(': ', 1)[1]}"


def _shared_gpus(results: list[dict[str, Any]], found: dict[int, list]) -> None:
    owners: dict[tuple[str, str], list[int]] = {}
    for r in results:
        device = r["device"]
        if device and device.get("uuid"):
            owners.setdefault((r["hostname"], device["uuid"]), []).append(r["rank"])
    for (host, uuid), ranks in owners.items():
        if len(ranks) > 1:
            for rank in ranks:
                found[rank].append(finding("preflight.setup", CRITICAL,
                                           f"shares GPU {uuid} on {host} with rank "
                                           f"{rank_list([x for x in ranks if x != rank])}: check LOCAL_RANK and "
                                           "CUDA_VISIBLE_DEVICES", {"uuid": uuid}))  # fmt: skip


def _speed(results: list[dict[str, Any]], found: dict[int, list], limits: Limits) -> None:
    from gpudash.preflight.references import mamf_gflops

    for model, group in _by_model(results).items():
        for precision in sorted({p for r in group for p in r.get("speed", {})}):
            rates = {r["rank"]: r["speed"][precision]["gflops"] for r in group
                     if (r.get("speed", {}).get(precision) or {}).get("gflops")}  # fmt: skip
            if len(rates) >= 2:
                best, median = max(rates.values()), statistics.median(rates.values())
                for rank, rate in rates.items():
                    below = (median - rate) / median * 100
                    if below <= limits.speed_warn_pct:
                        continue
                    r = next(x for x in group if x["rank"] == rank)
                    # A rate from rounds that all saw other load is a hint, never a failure.
                    busy = bool(r["speed"][precision]["contended"])
                    severity = CRITICAL if below > limits.speed_fail_pct and not busy else WARN
                    found[rank].append(finding("preflight.speed", severity,
                        f"{precision} matmul {rate:.4g} GFLOPS on {r['hostname']} {r['device']['key']}: "
                        f"{below:.0f}% below the median of {len(rates)} {model} ranks ({median:.4g}), "
                        f"{(best - rate) / best * 100:.0f}% below the best ({best:.4g})"
                        + (" (measured under other load)" if busy else ""),
                        {"precision": precision, "gflops": rate, "median_gflops": median, "best_gflops": best,
                         "pct_below_median": round(below, 1), "pct_below_best": round((best - rate) / best * 100, 1),
                         "host": r["hostname"], "device": r["device"]["key"],
                         "contended": r["speed"][precision]["contended"]}))  # fmt: skip
            for r in group:
                rate = (r.get("speed", {}).get(precision) or {}).get("gflops")
                mamf = mamf_gflops(r["device"], precision)
                if rate and mamf and rate < mamf[0] * (1 - limits.mamf_fail_pct / 100):
                    found[r["rank"]].append(finding("preflight.speed", WARN,
                        f"{precision} matmul {rate / 1000:.4g} TFLOPS is {(1 - rate / mamf[0]) * 100:.0f}% below "
                        f"the published MAMF of the {model} ({mamf[0] / 1000:.4g} TFLOPS, {mamf[1]})",
                        {"precision": precision, "gflops": rate, "mamf_gflops": mamf[0], "source": mamf[1]}))  # fmt: skip


def _fingerprints(results: list[dict[str, Any]], found: dict[int, list]) -> None:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in results:
        if r["device"]:
            key = (r["device"]["name"], r["versions"].get("torch"), r["versions"].get("cuda"),
                   r["versions"].get("hip"), r.get("threads"))  # fmt: skip
            groups.setdefault(key, []).append(r)
    for key, group in groups.items():
        for precision in sorted({p for r in group for p in r.get("fingerprints", {})}):
            sums = {r["rank"]: r["fingerprints"][precision]["sha256"] for r in group
                    if (r.get("fingerprints", {}).get(precision) or {}).get("sha256")}  # fmt: skip
            if len(set(sums.values())) < 2:
                continue
            counts = Counter(sums.values())
            usual, top = counts.most_common(1)[0]
            if list(counts.values()).count(top) > 1:  # no majority (two ranks that differ): name them all
                for rank, digest in sums.items():
                    others = [k for k, v in sums.items() if v != digest]
                    found[rank].append(finding("preflight.fingerprint", CRITICAL,
                        f"{precision} matmul chain gives other bits here (sha256 {digest[:12]}) than on rank "
                        f"{rank_list(others)}, same {key[0]}, torch and threads, and no majority says which is "
                        "right: run with a third rank", {"precision": precision, "sha256": digest}))  # fmt: skip
                continue
            agree = [k for k, v in sums.items() if v == usual]
            for rank, digest in sums.items():
                if digest != usual:
                    found[rank].append(finding("preflight.fingerprint", CRITICAL,
                        f"{precision} matmul chain gives other bits here (sha256 {digest[:12]}) than on rank "
                        f"{rank_list(agree)} ({usual[:12]}), same {key[0]}, torch and threads: silent data "
                        "corruption or another kernel",
                        {"precision": precision, "sha256": digest, "usual": usual}))  # fmt: skip


def node_of(result: dict[str, Any]) -> str:
    return result.get("node") or result["hostname"]


def _by_node(results: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """node -> its ranks' results, the nodes in the order of their lowest rank."""
    nodes: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(results, key=lambda x: x["rank"]):
        nodes.setdefault(node_of(r), []).append(r)
    return nodes


def _slowest(sweeps: list[list[dict[str, Any]] | None]) -> tuple[float, int] | None:
    """(busbw GB/s, bytes) at the largest size every sweep measured, of the slowest rank: a group's all_reduce is
    only as fast as its slowest rank; None if a sweep is missing."""
    measured = [{s["bytes"]: s["busbw_gbs"] for s in (sweep or []) if s.get("busbw_gbs")} for sweep in sweeps]
    if not measured or not all(measured):
        return None
    common = set.intersection(*(set(m) for m in measured))
    if not common:
        return None
    size = max(common)
    return min(m[size] for m in measured), size


def _why_not(rs: list[dict[str, Any]], key: str) -> str:
    for r in rs:
        c = r.get("collective")
        if not c:
            return "not measured (no collective: a lost rank, or the launcher stopped the job)"
        if not c["ok"]:
            return f"not measured: rank {r['rank']}'s all_reduce failed"
        failed = next((s["error"] for s in (c.get(key) or []) if s.get("error")), None)
        if failed:
            return f"failed on rank {r['rank']}: {failed}"
    return "not measured"


def bandwidth(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The all_reduce bus bandwidth within each node and across nodes (the report's "bandwidth"): each figure is
    that of the group's slowest rank at the largest size of the sweep."""
    nodes = _by_node(results)
    within = []
    for name, rs in nodes.items():
        entry: dict[str, Any] = {"node": name, "hosts": sorted({r["hostname"] for r in rs}),
                                 "ranks": [r["rank"] for r in rs], "busbw_gbs": None, "bytes": None,
                                 "contended": None, "note": None}  # fmt: skip
        top = _slowest([(r.get("collective") or {}).get("node_busbw") for r in rs]) if len(rs) >= 2 else None
        if top:
            entry["busbw_gbs"], entry["bytes"] = top
            entry["contended"] = other_load(results, entry["ranks"], top[1])
        else:
            entry["note"] = "one rank: no within-node all_reduce" if len(rs) < 2 else _why_not(rs, "node_busbw")
        within.append(entry)
    leaders = [rs[0] for rs in nodes.values()]
    across: dict[str, Any] = {"applicable": len(nodes) >= 2, "ranks": [r["rank"] for r in leaders],
                              "busbw_gbs": None, "bytes": None, "note": None}  # fmt: skip
    if len(nodes) < 2:
        across["ranks"] = []
        across["note"] = f"not applicable: one node ({next(iter(nodes), '?')}), every rank is on it"
    else:
        top = _slowest([(r.get("collective") or {}).get("across_busbw") for r in leaders])
        if top:
            across["busbw_gbs"], across["bytes"] = top
        else:
            across["note"] = _why_not(leaders, "across_busbw")
    return {"nodes": within, "across": across}


def _busbw(results: list[dict[str, Any]], found: dict[int, list], limits: Limits) -> None:
    """A node whose within-node bus bandwidth is far below that of its peers (nodes of as many ranks of the same
    model, measured at the same size), or below the published floor of a node of its kind."""
    from gpudash.preflight.references import busbw_floor

    nodes = _by_node(results)
    figures = {n["node"]: n for n in bandwidth(results)["nodes"] if n["busbw_gbs"]}
    peers: dict[tuple, list[str]] = {}
    for name, n in figures.items():
        models = tuple(sorted({(r["device"] or {}).get("name", "") for r in nodes[name]}))
        peers.setdefault((len(n["ranks"]), models, n["bytes"]), []).append(name)
    for (count, _models, _size), names in peers.items():
        if len(names) < 2:
            continue
        median = statistics.median(figures[x]["busbw_gbs"] for x in names)
        for name in names:
            n = figures[name]
            below = (median - n["busbw_gbs"]) / median * 100
            if below <= limits.busbw_fail_pct:
                continue
            hosts = ", ".join(n["hosts"])
            on = name if hosts == name else f"{name} ({hosts})"
            busy = n["contended"]  # as a contended matmul rate: a hint, never a failure
            for rank in n["ranks"]:
                found[rank].append(finding("preflight.busbw", WARN if busy else CRITICAL,
                    f"within-node all_reduce bus bandwidth on {on} {n['busbw_gbs']:.3g} GB/s is {below:.0f}% below "
                    f"the median of {len(names)} nodes of {count} ranks ({median:.3g} GB/s)"
                    + (f" (measured under other load: {busy})" if busy else ""),
                    {"node": name, "host": hosts, "busbw_gbs": n["busbw_gbs"], "median_gbs": median,
                     "bytes": n["bytes"], "ranks": n["ranks"], "contended": busy}))  # fmt: skip
    for name, n in figures.items():
        for r in nodes[name]:
            floor = busbw_floor(r, nodes[name])
            if floor and n["bytes"] >= floor["bytes"] and n["busbw_gbs"] < floor["gbs"]:
                busy = n["contended"]
                found[r["rank"]].append(finding("preflight.busbw", WARN if busy else CRITICAL,
                    f"within-node all_reduce bus bandwidth on {name} {n['busbw_gbs']:.3g} GB/s is below the "
                    f"published floor of {floor['gbs']:g} GB/s for {floor['node']} ({floor['source']})"
                    + (f" (measured under other load: {busy})" if busy else ""),
                    {"node": name, "busbw_gbs": n["busbw_gbs"], **floor, "contended": busy}))  # fmt: skip


def assess(results: list[dict[str, Any]], limits: Limits | None = None) -> dict[int, list[dict[str, Any]]]:
    """rank -> its findings (WARN and CRITICAL; an empty list: nothing to say)."""
    limits = limits or Limits()
    found = {r["rank"]: own_findings(r) for r in results}
    _drift(results, found)
    _precisions_elsewhere(results, found)
    _shared_gpus(results, found)
    _speed(results, found, limits)
    _fingerprints(results, found)
    _busbw(results, found, limits)
    return found


def judge(results: list[dict[str, Any]], limits: Limits | None = None) -> dict[int, list[str]]:
    """rank -> the summaries of its CRITICAL findings (an empty list: the rank passed)."""
    return {rank: [f["summary"] for f in fs if f["severity"] == CRITICAL]
            for rank, fs in assess(results, limits).items()}  # fmt: skip


__all__ = ["NONE", "Limits", "assess", "bandwidth", "finding", "judge", "node_of", "rank_list"]
