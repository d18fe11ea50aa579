"""Check results as text: a tally, one row per result (a run of like skips folded into one), fix and env."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudash.plugins_api import CheckResult

STATUS_ORDER = ("pass", "warn", "fail", "error", "skip")


def tally(results: Sequence[CheckResult]) -> str:
    """'1 pass, 1 warn, 5 skip' (in STATUS_ORDER), or '' when nothing ran."""
    counts = Counter(r.status for r in results)
    return ", ".join(f"{counts[s]} {s}" for s in STATUS_ORDER if counts[s])


def rows(results: Sequence[CheckResult]) -> list[dict[str, Any]]:
    """Results in table order; a run of same-summary skips on one device from one plugin becomes one row."""
    out: list[dict[str, Any]] = []
    for r in results:
        last = out[-1] if out else None
        if (
            last
            and r.status == "skip"
            and last["status"] == "skip"
            and last["device"] == r.device
            and last["plugin"] == r.plugin
            and last["summary"] == r.summary
        ):
            last["count"] += 1
            continue
        out.append(
            {
                "device": r.device,
                "plugin": r.plugin,
                "check": r.check,
                "status": r.status,
                "summary": r.summary,
                "remediation": r.remediation,
                "env": r.env,
                "count": 1,
            }
        )
    return out


def render(
    results: Sequence[CheckResult],
    source: str,
    n_checks: int,
    n_devices: int,
    failed_plugins: Sequence[dict[str, Any]],
    *,
    color: bool = False,
) -> str:
    from gpudash.render.style import STATUS_COLORS, Style

    style = Style(color)
    devices = f"{n_devices} device{'s' if n_devices != 1 else ''}"
    lines = [f"[{source}]  {n_checks} checks on {devices}: {tally(results) or 'nothing ran'}"]
    table = rows(results)
    labels = [
        f"{row['plugin']} ({row['count']} checks)" if row["count"] > 1 else f"{row['plugin']}/{row['check']}"
        for row in table
    ]
    w_dev = max([len("device")] + [len(row["device"]) for row in table])
    w_check = max([len("check")] + [len(label) for label in labels])
    w_status = len("status")
    lines.append(f"{'device'.ljust(w_dev)}  {'check'.ljust(w_check)}  {'status'.ljust(w_status)}  summary")
    pad = " " * (w_dev + w_check + w_status + 6)
    for row, label in zip(table, labels):
        lines.append(
            f"{row['device'].ljust(w_dev)}  {label.ljust(w_check)}  "
            f"{style(row['status'], *STATUS_COLORS.get(row['status'], ()))}{' ' * (w_status - len(row['status']))}  "
            f"{row['summary']}"
        )
        if row["status"] != "skip":
            if row["remediation"]:
                lines.append(f"{pad}fix: {row['remediation']}")
            if row["env"]:
                lines.append(f"{pad}env: " + " ".join(f"{k}={v}" for k, v in row["env"].items()))
    for failed in failed_plugins:
        lines.append(f"plugin {failed['plugin']} had errors: {'; '.join(failed['errors'])}")
    return "\n".join(lines)


def describe(result: CheckResult) -> str:
    """One result in full: what ran where, its summary, the fix and the environment variables to set."""
    lines = [f"{result.plugin}/{result.check} on {result.device}: {result.status}", result.summary]
    if result.remediation:
        lines.append(f"fix: {result.remediation}")
    if result.env:
        lines.append("env: " + " ".join(f"{k}={v}" for k, v in result.env.items()))
    return "\n".join(lines)
