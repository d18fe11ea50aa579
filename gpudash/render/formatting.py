"""Units and plain-text tables: the small pieces every text of the CLI and the TUI is made of."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudash.models import DeviceInfo, ProcessUsage

NA = "n/a"
GIB = 1024**3


def gib(value: int | None) -> str:
    return NA if value is None else f"{value / GIB:.1f}"


def memory(used: int | None, total: int | None) -> str:
    if total is None and used is None:
        return NA
    return f"{gib(used)} / {gib(total)} GiB"


def pct(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}%"


def number(value: float | None, unit: str, digits: int = 0) -> str:
    return NA if value is None else f"{value:.{digits}f} {unit}"


def arch_label(device: DeviceInfo) -> str:
    """'cc 9.0', 'gfx942', or the CPU's strongest precision-relevant feature."""
    if device.compute_capability:
        return f"cc {device.compute_capability}"
    if device.gfx_target:
        return device.gfx_target
    if device.vendor == "cpu":
        for feature in ("amx_bf16", "avx512_bf16", "avx512_f", "avx2", "bf16", "asimddp"):
            if feature in device.cpu_features:
                return feature.upper().replace("_", "-")
    return NA


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Left-aligned plain-text columns, no colour (safe to pipe)."""
    everything: list[list[object]] = [list(header), *(list(r) for r in rows)]
    widths = [max(len(str(r[i])) for r in everything) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in everything]
    return "\n".join(lines)


def processes(procs: Sequence[ProcessUsage] | None, limit: int = 3) -> str:
    """'python[4242] 1.0 GiB · train[77] n/a +2 more', or '' when none are listed."""
    if not procs:
        return ""
    ranked = sorted(procs, key=lambda p: -(p.memory_used_bytes or 0))
    parts = [
        f"{p.name or '?'}[{p.pid}] {gib(p.memory_used_bytes)}{'' if p.memory_used_bytes is None else ' GiB'}"
        for p in ranked[:limit]
    ]
    more = f" +{len(procs) - limit} more" if len(procs) > limit else ""
    return " · ".join(parts) + more


def index_runs(indices: Sequence[int]) -> str:
    """ "0-5,7" from [0, 1, 2, 3, 4, 5, 7]."""
    runs: list[list[int]] = []
    for index in sorted(set(indices)):
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def key_ranges(devices: Iterable[dict[str, Any]]) -> str:
    """'nvidia:0-7', 'nvidia:0,2 amd:1': device keys with runs of indices folded."""
    by_vendor: dict[str, list[int]] = {}
    for dev in devices:
        by_vendor.setdefault(dev["vendor"], []).append(int(dev["index"]))
    parts = []
    for vendor, indices in by_vendor.items():
        parts.append(f"{vendor}:{index_runs(indices)}")
    return " ".join(parts)
