"""The preflight report as plain text: one row per rank, then every problem named by its rank."""

from __future__ import annotations

from typing import Any

from gpudash.preflight.rank import works
from gpudash.preflight.verdict import rank_list
from gpudash.render import formatting as fmt

MARK = {True: "✓", False: "✗", None: "–"}


def _plain(problems: list[str]) -> list[dict[str, Any]]:
    """Problems of a report without findings (older documents): CRITICAL, no ID known."""
    return [{"id": "preflight", "severity": "CRITICAL", "action": "none", "summary": p} for p in problems]


def _precisions(rank: dict[str, Any]) -> str:
    return " ".join(f"{p} {MARK[works(e)]}" for p, e in rank["precisions"].items()) or "–"


def _checks(rank: dict[str, Any]) -> str:
    ran = [c for c in rank["checks"] if c["status"] != "skip"]
    if not ran:
        return "–"
    bad = [c for c in ran if c["status"] in ("fail", "error")]
    return f"{len(ran) - len(bad)}/{len(ran)} pass" if bad else f"{len(ran)} pass"


def _collective(rank: dict[str, Any]) -> str:
    c = rank.get("collective")
    if not c:
        return "–"
    return f"{c['backend']} ok {c['ms']:.1f} ms{_busbw(rank)}" if c["ok"] else f"{c['backend']} FAILED"


def _speed(rank: dict[str, Any]) -> str:
    rates = [(p, r["gflops"]) for p, r in rank.get("speed", {}).items() if r.get("gflops")]
    return " ".join(f"{p} {fmt_rate(g)}" for p, g in rates) or "–"


def fmt_rate(gflops: float) -> str:
    return f"{gflops / 1000:.3g}T" if gflops >= 1000 else f"{gflops:.3g}G"


def _size(size: int) -> str:
    return f"{size / 2**30:g} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"


def _busbw(rank: dict[str, Any]) -> str:
    sweep = [s for s in ((rank.get("collective") or {}).get("busbw") or []) if s.get("busbw_gbs")]
    if not sweep:
        return ""
    top = max(sweep, key=lambda s: s["bytes"])
    return f", busbw {top['busbw_gbs']:.3g} GB/s at {_size(top['bytes'])}"


def _figure(entry: dict[str, Any]) -> str:
    if entry["busbw_gbs"] is None:
        return entry["note"] or "not measured"
    return f"{entry['busbw_gbs']:.3g} GB/s at {_size(entry['bytes'])}"


def bandwidth_lines(bandwidth: dict[str, Any] | None) -> list[str]:
    """The within-node figure of each node and the across-node one (a group's slowest rank, nccl-tests' busbw)."""
    if not bandwidth:
        return []
    lines = ["all_reduce bus bandwidth (nccl-tests' busbw, the group's slowest rank, the sweep's largest size):"]
    for n in bandwidth["nodes"]:
        hosts = ", ".join(n["hosts"])
        where = n["node"] if hosts == n["node"] else f"{n['node']} ({hosts})"
        busy = f" (under other load: {n['contended']})" if n.get("contended") else ""
        lines.append(f"  within {where}, rank {rank_list(n['ranks'])}: {_figure(n)}{busy}")
    across = bandwidth["across"]
    if across["applicable"]:
        lines.append(f"  across nodes, rank {rank_list(across['ranks'])} (one per node): {_figure(across)}")
    else:
        lines.append(f"  across nodes: {across['note']}")
    return lines


def text(doc: dict[str, Any]) -> str:
    n = doc["world_size"]
    how = "one process, no launcher" if doc["launcher"] == "none" else f"{doc['launcher']}, {doc['backend']}"
    verdict = "all ranks pass" if doc["ok"] else f"FAILED on rank {rank_list(doc['failed_ranks'])}"
    lines = [f"gpudash preflight · {n} rank{'s' if n != 1 else ''} ({how}) · {verdict}"]
    rows = []
    for r in doc["ranks"]:
        device = r["device"]
        rows.append(
            [
                str(r["rank"]),
                r["hostname"],
                f"{device['key']} {device['name']}" if device else "none",
                r["versions"].get("torch") or "–",
                r["versions"].get("driver") or "–",
                _precisions(r),
                _speed(r),
                _checks(r),
                _collective(r),
                "ok" if r["ok"] else "FAILED",
            ]
        )
    for x in doc.get("lost", []):
        rows.append([str(x["rank"]), x["hostname"] or "–", "–", "–", "–", "–", "–", "–", "–", f"LOST: {x['state']}"])
    rows.sort(key=lambda row: int(row[0]))
    lines.append(
        fmt.table(
            rows, ["rank", "host", "device", "torch", "driver", "probes", "matmul", "checks", "collective", "result"]
        )
    )
    if n > 1:  # one process has no collective: its JSON says so
        lines += bandwidth_lines(doc.get("bandwidth"))
    found = [(r["rank"], f) for r in doc["ranks"] for f in r.get("findings", _plain(r["problems"]))]
    found += [(x["rank"], x["finding"]) for x in doc.get("lost", []) if "finding" in x]
    found.sort(key=lambda item: (item[0], item[1]["severity"] != "CRITICAL"))
    if found:
        lines.append("findings (severity, check ID, action):")
        lines += [f"  rank {rank}: {f['severity']} {f['id']} ({f['action']}): {f['summary']}" for rank, f in found]
    lines += [f"note: {n}" for n in doc["notes"]]
    return "\n".join(lines)
