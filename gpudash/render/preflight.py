"""The preflight report as plain text: one row per rank, then every problem named by its rank."""

from __future__ import annotations

from typing import Any

from gpudash.preflight.rank import works
from gpudash.preflight.verdict import rank_list
from gpudash.render import formatting as fmt

MARK = {True: "✓", False: "✗", None: "–"}


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
    return f"{c['backend']} ok {c['ms']:.1f} ms" if c["ok"] else f"{c['backend']} FAILED"


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
                _checks(r),
                _collective(r),
                "ok" if r["ok"] else "FAILED",
            ]
        )
    for x in doc.get("lost", []):
        rows.append([str(x["rank"]), x["hostname"] or "–", "–", "–", "–", "–", "–", "–", f"LOST: {x['state']}"])
    rows.sort(key=lambda row: int(row[0]))
    lines.append(
        fmt.table(rows, ["rank", "host", "device", "torch", "driver", "probes", "checks", "collective", "result"])
    )
    problems = [(r["rank"], p) for r in doc["ranks"] for p in r["problems"]]
    problems += [(x["rank"], f"{x['state']}: {x['detail']}") for x in doc.get("lost", [])]
    problems.sort(key=lambda item: item[0])
    if problems:
        lines.append("problems:")
        lines += [f"  rank {rank}: {p}" for rank, p in problems]
    lines += [f"note: {n}" for n in doc["notes"]]
    return "\n".join(lines)
