"""The Fleet tab's lines under its table: the operators' view of `gpudash fleet` in a few lines.

`gpudash fleet` prints every drift and the 20 largest users and jobs under its table (render.fleet.operator_lines);
an 80x24 screen has room for a few lines, so here each list names its first few, in the same words, and ends with
a count of what it left out: no line is cut, and the drift column marks every odd host.
"""

from __future__ import annotations

from gpudash.fleet.drift import Drift
from gpudash.fleet.model import FleetRound
from gpudash.fleet.totals import UsageTotal, usage
from gpudash.render import formatting as fmt

MOST = 3  # the drift lines, odd hosts on one, users and jobs named under the Fleet tab's table


def drift_line(d: Drift, most: int = MOST) -> str:
    """One fact on which hosts differ: the fleet's value and the first `most` odd hosts' values."""
    odd = list(d.odd.items())
    said = ", ".join(f"{host} {value}" for host, value in odd[:most])
    if len(odd) > most:
        said += f" (+{len(odd) - most} more)"
    base = f"{d.majority} on most of {d.hosts} hosts" if d.majority else f"no majority among {d.hosts} hosts"
    return f"drift: {d.fact} ({d.vendor} hosts) {base}; odd: {said}"


def usage_line(sums: list[UsageTotal], by: str, most: int = MOST) -> str:
    """GPU memory per user or job (gpudash.fleet.totals.usage), the largest `most`, then a count of the rest."""
    shown = "; ".join(
        f"{u.name} {fmt.gib(int(u.memory_bytes))} GiB on {len(u.gpus)} GPU{'s' if len(u.gpus) != 1 else ''}"
        for u in sums[:most]
    )
    more = f" (+{len(sums) - most} more)" if len(sums) > most else ""
    return f"GPU memory by {by}: {shown}{more}"


def summary_lines(fleet: FleetRound, drifts: list[Drift], most: int = MOST) -> list[str]:
    """At most `most` drift lines (then one naming the other facts), GPU memory by user and by job where
    exporters label them; [] when the fleet has none of these."""
    lines = [drift_line(d, most) for d in drifts[:most]]
    if len(drifts) > most:
        rest = ", ".join(dict.fromkeys(d.fact for d in drifts[most:]))
        lines.append(f"drift: {len(drifts) - most} more facts differ ({rest}); the drift column marks the hosts")
    for by in ("user", "job"):
        sums = usage(fleet, by)
        if sums:
            lines.append(usage_line(sums, by, most))
    return lines
