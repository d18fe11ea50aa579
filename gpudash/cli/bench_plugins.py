"""Plugin benchmarks inside `gpudash bench`: run after the built-in sweep, reported beside it.

They go under each device's "plugin_benchmarks" key of the bench JSON (an extension of the contract), not
into "results": a plugin's "adaptive_matmul" row is not a point of the built-in per-precision sweep, and
mixing them would change what peak_gflops_by_precision means.
"""

from __future__ import annotations

import sys


def run_plugin_benchmarks(ctx, machine, devices, budget_s: float, timeout_s: float) -> dict[str, list[dict]]:
    """device key -> the plugin runs on it (plugin, benchmark, status, summary, results)."""
    from gpudash.cli.plugins_cmd import plugin_manager_for
    from gpudash.plugin_manager import collect_benchmarks, run_benchmarks

    pm = plugin_manager_for(ctx)
    if not collect_benchmarks(pm):
        return {}
    if not machine.replayed:
        print("gpudash: running plugin benchmarks", file=sys.stderr, flush=True)
    runs = run_benchmarks(machine, pm, devices=devices, budget_s=budget_s, timeout_s=timeout_s)
    out: dict[str, list[dict]] = {}
    for run in runs:
        out.setdefault(run.device, []).append(run.to_dict())
    return out


def attach(data: dict, by_device: dict[str, list[dict]]) -> None:
    for dev in data["devices"]:
        if dev.get("key") not in by_device:
            continue
        dev["plugin_benchmarks"] = by_device[dev["key"]]
        # Where the sweep proved an estimated peak too low, an efficiency against it means nothing here either.
        too_low = {p for p, info in (dev.get("peak_provenance") or {}).items() if info.get("too_low")}
        for run in dev["plugin_benchmarks"]:
            for result in run.get("results") or []:
                if result.get("precision") in too_low:
                    result["efficiency"] = None


def render(dev: dict) -> list[str]:
    from gpudash import formatting as fmt

    runs = dev.get("plugin_benchmarks") or []
    if not runs:
        return []
    rows, lines = [], []
    for run in runs:
        name = f"{run['plugin']}/{run['benchmark']}"
        if run["status"] != "ok":
            lines.append(f"{name}: {run['status']}: {run.get('summary') or ''}".rstrip(": "))
            continue
        for r in run["results"]:
            eff = r.get("efficiency")
            rows.append(
                [
                    name,
                    r.get("precision") or "",
                    r.get("op") or "",
                    "x".join(map(str, r.get("shape") or [])),
                    f"{r['gflops']:.1f}" if r.get("gflops") is not None else fmt.NA,
                    f"{eff:.0%}" if eff is not None else fmt.NA,
                    (r.get("details") or {}).get("note") or "",
                ]
            )
    table = (
        [fmt.table(rows, ["plugin benchmark", "precision", "op", "shape", "GFLOPS", "efficiency", "note"])]
        if rows
        else []
    )
    return ["plugin benchmarks:"] + table + lines
