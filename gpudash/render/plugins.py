"""The plugin listing as text: name, version, where it came from, hooks, what it provides, and errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpudash.render import formatting as fmt

if TYPE_CHECKING:
    from gpudash.plugin_manager import PluginRecord

KINDS = ("checks", "benchmarks", "kernels")


def provides_text(provides: dict[str, list[str]]) -> str:
    """'2 checks, 1 benchmark', or '-' when the plugin registered nothing."""
    parts = []
    for kind in KINDS:
        count = len(provides.get(kind) or [])
        if count:
            parts.append(f"{count} {kind[:-1] if count == 1 else kind}")
    return ", ".join(parts) or "-"


def origin_text(record: PluginRecord) -> str:
    return f"{record.source} ({record.origin})"


def status_text(record: PluginRecord) -> str:
    return "loaded" if record.loaded and not record.errors else "loaded, with errors" if record.loaded else "FAILED"


def render(records: Sequence[PluginRecord], load_env: str | None) -> str:
    if not records:
        why = f" (GPUDASH_LOAD_PLUGINS={load_env!r})" if load_env is not None else ""
        return f"no plugins found{why}"
    rows = [
        [r.name, r.version or "-", origin_text(r), ", ".join(r.hooks) or "-", provides_text(r.provides), status_text(r)]
        for r in records
    ]
    lines = fmt.table(rows, ["name", "version", "from", "hooks", "provides", "status"]).splitlines()
    out = [lines[0]]
    for line, record in zip(lines[1:], records):
        out.append(line)
        out.extend(f"  error: {e}" for e in record.errors)
    if load_env is not None:
        out.append(f"GPUDASH_LOAD_PLUGINS={load_env!r}: only the plugins named there were loaded")
    return "\n".join(out)


def explain(record: PluginRecord) -> str:
    """One plugin in full: origin, module, hooks, each thing it provides by name, and why it failed."""
    lines = [f"{record.name} {record.version or ''}".rstrip() + f" · {origin_text(record)}"]
    if record.target:
        lines.append(f"module: {record.target}")
    lines.append(f"hooks: {', '.join(record.hooks) or 'none'} · provides: {provides_text(record.provides)}")
    for kind in KINDS:
        if record.provides.get(kind):
            lines.append(f"{kind}: {', '.join(record.provides[kind])}")
    lines.extend(f"why: {error}" for error in record.errors)
    return "\n".join(lines)
