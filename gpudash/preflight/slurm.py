"""Slurm's compact host lists ("node[01-04,07],gpu5"): the first host is where rank 0 runs.

srun starts task 0 on the first node of the step's list (block distribution, the default), so that node is
where the process group's store listens when only srun (no torchrun) launched us.
"""

from __future__ import annotations

import re
from pathlib import Path


def _split_top_level(nodelist: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in nodelist:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p for p in [*parts, current] if p]


def first_host(nodelist: str) -> str | None:
    """The first host of a Slurm nodelist, or None when it cannot be read."""
    parts = _split_top_level(nodelist.strip())
    if not parts:
        return None
    entry = parts[0]
    match = re.fullmatch(r"([^\[\]]*)\[([^\]]+)\](.*)", entry)
    if match is None:
        return entry if "[" not in entry and "]" not in entry else None
    prefix, ranges, rest = match.groups()
    low = ranges.split(",")[0].split("-")[0]
    if not low.isdigit():
        return None
    return prefix + low + ((first_host(rest) or "") if rest else "")


# Derived ports stay below Linux's ephemeral range (ip_local_port_range, 32768-60999 by default), where the
# kernel picks the source ports of outgoing connections: a derived port there may already be taken by one.
# The range is fixed, not read from /proc, so every node computes the same port whatever its own setting.
PORT_BASE, PORT_SPAN = 20000, 32768 - 20000


def ephemeral_range(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int] | None:
    try:
        low, high = (int(x) for x in Path(path).read_text().split())
        return low, high
    except (OSError, ValueError):
        return None


def job_port(job_id: str | None, step_id: str | None, base: int = PORT_BASE, span: int = PORT_SPAN) -> int:
    """A port every task of one job step computes alike, and that differs between concurrent steps."""
    try:
        job, step = int(job_id or 0), int(step_id or 0)
    except ValueError:
        job, step = 0, 0
    return base + (job * 31 + step) % span
