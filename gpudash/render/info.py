"""The info JSON as text: one row per device (like gpustat), the processes on each GPU, and notes."""

from __future__ import annotations

from typing import Any

from gpudash.render import formatting as fmt

HEADER = ["device", "name", "arch", "id", "memory", "util", "temp", "power", "native precisions"]


def render(data: dict[str, Any]) -> str:
    host, runtime = data["host"], data["runtime"]
    versions = ", ".join(f"{k} {v}" for k, v in runtime.items() if v) or "no GPU runtime"
    lines = [f"{host.get('hostname') or '?'}  [{data['source']}]  {versions}"]
    rows = []
    for dev in data["devices"]:
        s = dev.get("sample") or {}
        native = [n for n, p in dev["precisions"].items() if p["native"]]
        ident = (dev["compute_capability"] and f"cc {dev['compute_capability']}") or dev["gfx_target"] or ""
        rows.append(
            [
                f"[{dev['vendor']}:{dev['index']}]",
                dev["name"],
                dev["arch"],
                ident,
                fmt.memory(s.get("memory_used_bytes"), s.get("memory_total_bytes") or dev["memory_total_bytes"]),
                fmt.pct(s.get("utilization_pct")),
                fmt.number(s.get("temperature_c"), "C"),
                fmt.number(s.get("power_w"), "W"),
                " ".join(native),
            ]
        )
    lines.append(fmt.table(rows, HEADER))
    lines += process_lines(data["devices"])
    for note in data.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def process_lines(devices: list[dict[str, Any]]) -> list[str]:
    """One line per GPU with processes on it: name[pid] and memory, biggest first (gpustat's -p)."""
    from gpudash.models import ProcessUsage, from_dict

    lines = []
    for dev in devices:
        procs = (dev.get("sample") or {}).get("processes")
        if dev["vendor"] != "cpu" and procs:
            listed = fmt.processes([from_dict(ProcessUsage, p) for p in procs], limit=8)
            lines.append(f"[{dev['vendor']}:{dev['index']}] processes: {listed}")
    return lines
