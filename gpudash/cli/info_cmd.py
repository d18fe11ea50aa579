"""`gpudash info`: a one-shot table of the devices (like gpustat), or the JSON contract."""

from __future__ import annotations

import json


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "info",
        parents=parents,
        help="list devices, architecture and live readings once",
        description="List every device once: architecture, memory, load and the "
        "precisions its architecture supports natively.",
    )
    p.add_argument("--json", action="store_true", help="print the info JSON contract (design.md) instead of a table")
    p.add_argument("--no-torch", action="store_true", help="skip torch's view of the GPUs (faster)")
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.info import info_json

    machine = ctx.machine(include_torch=not ctx.args.no_torch)
    data = info_json(machine)
    if ctx.args.json:
        print(json.dumps(data, indent=2))
    else:
        print(render(data))
    return 0


def render(data: dict) -> str:
    from gpudash import formatting as fmt

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
    lines.append(
        fmt.table(rows, ["device", "name", "arch", "id", "memory", "util", "temp", "power", "native precisions"])
    )
    lines += process_lines(data["devices"])
    for note in data.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def process_lines(devices: list[dict]) -> list[str]:
    """One line per GPU with processes on it: name[pid] and memory, biggest first (gpustat's -p)."""
    from gpudash import formatting as fmt
    from gpudash.models import ProcessUsage, from_dict

    lines = []
    for dev in devices:
        procs = (dev.get("sample") or {}).get("processes")
        if dev["vendor"] != "cpu" and procs:
            listed = fmt.processes([from_dict(ProcessUsage, p) for p in procs], limit=8)
            lines.append(f"[{dev['vendor']}:{dev['index']}] processes: {listed}")
    return lines
