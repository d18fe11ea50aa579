"""The text of the process screen: one process's fields with the reason for each n/a, its place in the
process tree, and its environment. Takes gpudash.actions.process_details.ProcessDetails (read by duck type:
the shared text never imports an action)."""

from __future__ import annotations

import time
from typing import Any

from gpudash.render import monitor
from gpudash.render.formatting import NA


def _or_reason(value: str | None, details: Any, name: str) -> str:
    if value is not None:
        return value
    why = details.unavailable.get(name)
    return f"{NA} ({why})" if why else NA


def started(epoch: float | None, now: float | None = None) -> str | None:
    """ "2026-05-17 14:03:22 (3:25:07 ago)"; None when unknown."""
    if epoch is None:
        return None
    now = time.time() if now is None else now
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
    return f"{stamp} ({monitor.elapsed(max(0.0, now - epoch))} ago)"


def field_rows(details: Any, now: float | None = None) -> list[tuple[str, str]]:
    """(label, value) for the screen's field list, every n/a with its reason."""
    cpu = None if details.cpu_pct is None else f"{details.cpu_pct:.1f} % of one core"
    memory = None if details.host_memory_bytes is None else monitor.size(details.host_memory_bytes) + " resident"
    threads = None if details.threads is None else str(details.threads)
    return [
        ("pid", str(details.pid)),
        ("name", _or_reason(details.name, details, "name")),
        ("user", _or_reason(details.user, details, "user")),
        ("started", _or_reason(started(details.started, now), details, "started")),
        ("threads", _or_reason(threads, details, "threads")),
        ("CPU", _or_reason(cpu, details, "cpu_pct")),
        ("host memory", _or_reason(memory, details, "host_memory_bytes")),
        ("directory", _or_reason(details.cwd, details, "cwd")),
        ("command", _or_reason(details.command, details, "command")),
    ]


def tree_lines(details: Any) -> list[str]:
    """init at the top, each ancestor one step in, this process marked, its descendants below it."""
    lines = []
    chain = list(reversed(details.ancestors))  # init first
    for depth, node in enumerate(chain):
        lines.append("  " * depth + ("└─ " if depth else "") + f"{node.pid} {node.name or NA}")
    here = len(chain)
    lines.append("  " * here + ("└─ " if here else "") + f"{details.pid} {details.name or NA}  ◀ this process")
    for node in details.descendants:
        lines.append("  " * (here + node.depth) + f"└─ {node.pid} {node.name or NA}")
    if details.more_descendants:
        lines.append("  " * (here + 1) + f"… and {details.more_descendants} more")
    for part in ("ancestors", "descendants"):
        if part in details.unavailable:
            lines.append(f"{part}: {NA} ({details.unavailable[part]})")
    return lines


def environment_lines(details: Any) -> list[str]:
    """NAME=value, sorted by name; secret-looking values were redacted when read."""
    if details.environment is None:
        return [f"environment: {NA} ({details.unavailable.get('environment', 'not read')})"]
    if not details.environment:
        return ["environment: empty"]
    return [f"{name}={value}" for name, value in sorted(details.environment.items())]


def gpu_memory_line(label: str, used: int | None, total: int | None, sm_pct: float | None) -> str:
    """ "GPU 3 · 10.0 GiB of 80.0 GiB · SM 42 %" for the chart's title."""
    used_text = NA if used is None else f"{used / 2**30:.1f} GiB"
    of = "" if total is None else f" of {total / 2**30:.1f} GiB"
    sm = NA if sm_pct is None else f"{sm_pct:.0f} %"
    return f"GPU {label} · {used_text}{of} · SM {sm}"
