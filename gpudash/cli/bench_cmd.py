"""`gpudash bench`: matmul throughput per precision over a sweep of shapes, and memory bandwidth.

Per precision: the best shape's GFLOPS, the median over shapes, latency median and spread, efficiency
against the theoretical peak (with the peak's provenance) and the speedup over fp32. Progress goes to
stderr, so `--json` can be piped. Each live run is kept in the history store for before/after
comparisons; `--save` writes a calibration profile, `--load` shows one, `--compare A B` sets two side by side.
"""

from __future__ import annotations

import json
import sys
import time

DASH = "–"


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "bench", parents=parents, help="measure matmul throughput per precision and memory bandwidth",
        description="Time matmuls in every precision over a sweep of shapes (warm-up, repetitions within a "
                    "per-case time budget, median and spread) in a child process with a time limit, plus "
                    "memory bandwidth. Efficiency is against the theoretical peak, labelled with where the "
                    "peak came from.")
    p.add_argument("--device", metavar="N|KEY", action="append",
                   help="benchmark only this device: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, "
                        "cuda:N, or a GPU index N (repeatable; default: every device)")
    p.add_argument("--precisions", metavar="LIST",
                   help="comma-separated precisions, e.g. fp32,bf16,int8 (default: every precision the "
                        "architecture has, native or emulated)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="a short sweep of shapes chosen to reach near-peak throughput (the default)")
    size.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="a long sweep (mamf-finder style: M over a range at fixed N and K, plus squares)")
    p.add_argument("--json", action="store_true", help="print the bench JSON contract (design.md) instead of a table")
    p.add_argument("--save", metavar="PATH", help="also write a calibration profile (JSON) of the device to PATH")
    p.add_argument("--load", metavar="PROFILE", help="show a saved profile instead of measuring")
    p.add_argument("--compare", metavar="PROFILE", nargs=2, help="compare two saved profiles (B against A)")
    p.add_argument("--preset", metavar="NAME",
                   help="use a named part's theoretical peaks (gpudash bench --preset list shows them)")
    p.add_argument("--no-plugins", action="store_true", help="skip the benchmarks that plugins add")
    p.add_argument("--skip-platform-check", action="store_true",
                   help="use --preset even on a platform it was not made for (efficiencies will be wrong)")
    p.add_argument("--case-budget", metavar="S", type=float, default=None,
                   help="most seconds one shape may take; a slower call skips the larger shapes "
                        "(default: config bench.case_budget_s)")
    p.add_argument("--timeout", metavar="S", type=float, default=None,
                   help="time limit for the whole run, seconds (default: config bench.timeout_s)")
    p.set_defaults(func=run, mode=None)


# ---------------------------------------------------------------------------------------------------


class Progress:
    """A one-line bar on a terminal; on a pipe, one line per finished task (nothing on stdout)."""

    WIDTH = 24

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, event: dict) -> None:
        done, total = event["done"], max(event["total"], 1)
        what = " ".join(str(x) for x in (event["device"], event.get("precision") or event["kind"]) if x)
        if self.tty:
            filled = int(self.WIDTH * done / total)
            shape = event.get("shape")
            detail = f" {'x'.join(map(str, shape))}" if shape else ""
            line = (f"\rbench [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} "
                    f"{time.monotonic() - self.started:4.0f} s  {what}{detail}")
            self.stream.write(line.ljust(78)[:100])
            self.stream.flush()
            self.drawn = True
        elif event.get("status"):
            self.stream.write(f"gpudash: [{done}/{total}] {what}: {event['status']} "
                              f"({time.monotonic() - self.started:.1f} s)\n")
            self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------------


def run(ctx) -> int:
    from gpudash.errors import UsageError

    args = ctx.args
    if args.load and args.compare:
        raise UsageError("--load and --compare: choose one")
    if args.load:
        return _show_profile(args.load, args.json)
    if args.compare:
        return _compare(*args.compare, as_json=args.json)
    if args.preset == "list":
        print(_render_presets())
        return 0
    return _measure(ctx)


def _parse_precisions(text: str | None) -> list[str] | None:
    from gpudash.errors import UsageError
    from gpudash.precisions import PRECISIONS

    if text is None:
        return None
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError("--precisions: expected a comma-separated list, e.g. fp32,bf16")
    unknown = [p for p in names if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"--precisions: unknown precision '{unknown[0]}' (choose from {', '.join(PRECISIONS)})")
    return list(dict.fromkeys(names))


def _positive(value: float | None, option: str, default: float) -> float:
    from gpudash.errors import UsageError

    if value is None:
        return default
    if not value > 0:
        raise UsageError(f"{option}: expected a positive number of seconds, got {value}")
    return value


def _choose_devices(ctx, machine, preset):
    """The devices to measure, and with a preset, a platform check for each."""
    from gpudash.errors import GpudashError, UsageError
    from gpudash.measure import presets
    from gpudash.measure.probe import find_device

    if ctx.args.device:
        devices = [find_device(machine, d) for d in ctx.args.device]
    elif preset is not None:  # the preset says which kind of device it describes
        devices = [d for d in machine.devices if presets.device_type(d) == preset.device] or machine.devices[:1]
    else:
        devices = list(machine.devices)
    if not devices:
        raise UsageError("no devices to benchmark")
    if preset is not None:
        for device in devices:
            facts = presets.platform_of(machine, device)
            problems = presets.mismatches(preset, facts)
            if not problems:
                continue
            if ctx.args.skip_platform_check:
                print(f"gpudash: warning: --skip-platform-check: preset '{preset.name}' "
                      f"{problems[0]}; its peaks will give wrong efficiencies here", file=sys.stderr)
                continue
            print(presets.mismatch_message(preset, facts, problems), file=sys.stderr)
            fits = ", ".join(presets.presets_that_fit(facts)) or "none"
            raise GpudashError(f"--preset {preset.name}: platform mismatch ({problems[0]}); presets that fit: {fits}")
    return devices


def _measure(ctx) -> int:
    from pathlib import Path

    from gpudash import store
    from gpudash.errors import UsageError
    from gpudash.measure import presets
    from gpudash.measure.bench import bench_json, bench_machine

    args = ctx.args
    precisions = _parse_precisions(args.precisions)
    preset = presets.get_preset(args.preset) if args.preset else None
    budget = _positive(args.case_budget, "--case-budget", ctx.config["bench"]["case_budget_s"])
    timeout = _positive(args.timeout, "--timeout", ctx.config["bench"]["timeout_s"])
    if args.save:
        folder = Path(args.save).parent
        if not folder.is_dir():  # fail before spending a minute measuring
            raise UsageError(f"--save {args.save}: folder {folder} does not exist")
    mode = args.mode or "quick"
    machine = ctx.machine()
    devices = _choose_devices(ctx, machine, preset)
    if args.save and len(devices) > 1:
        keys = ", ".join(d.key for d in devices)
        raise UsageError(f"--save: a profile describes one device; choose one with --device ({keys})")
    if not machine.replayed:
        print(f"gpudash: benchmarking {', '.join(d.key for d in devices)} ({mode} sweep, case budget {budget:g} s) "
              "in a child process", file=sys.stderr, flush=True)
    progress = Progress()
    try:
        reports = bench_machine(machine, devices=devices, precisions=precisions, mode=mode, case_budget_s=budget,
                                timeout_s=timeout, on_progress=progress,
                                peak_overrides=preset.peaks() if preset else None)
    finally:
        progress.close()
    data = bench_json(machine, reports, mode, preset.name if preset else None)
    if not args.no_plugins and not preset:
        from gpudash.cli import bench_plugins

        bench_plugins.attach(data, bench_plugins.run_plugin_benchmarks(ctx, machine, devices, budget, timeout))
    if not machine.replayed:
        path = store.append_history("bench", machine, data)
        print(f"gpudash: run kept in {path}", file=sys.stderr)
    if args.save:
        from gpudash.measure.profile import profile_from_report, save_profile

        report = next(iter(reports.values()))
        replaced = save_profile(profile_from_report(report, machine, preset.name if preset else None), args.save)
        print(f"gpudash: {'replaced' if replaced else 'wrote'} profile {args.save}", file=sys.stderr)
    if args.json:
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print(render(data))
    return 0


def _show_profile(path: str, as_json: bool) -> int:
    from gpudash.measure.profile import load_profile, report_from_profile

    profile = load_profile(path)
    if as_json:
        print(json.dumps(profile.to_dict(), indent=2))
        return 0
    meta = profile.metadata
    report = report_from_profile(profile)
    data = {"source": f"profile {path}", "mode": meta.mode, "preset": meta.preset, "devices": [report.to_json()]}
    print(f"profile {path}: {meta.hardware_name} · {meta.device_type} on {meta.platform_architecture} · "
          f"{meta.calibration_date or 'undated'} · torch {meta.torch_version or '?'} · gpudash {meta.gpudash_version}")
    print(render(data))
    return 0


def _compare(path_a: str, path_b: str, as_json: bool) -> int:
    from gpudash import formatting as fmt
    from gpudash.measure.profile import compare_profiles, load_profile

    a, b = load_profile(path_a), load_profile(path_b)
    rows = compare_profiles(a, b)
    if as_json:
        print(json.dumps({"a": path_a, "b": path_b, "rows": rows}, indent=2))
        return 0
    table = [[r["precision"], _num(r["a_gflops"]), _num(r["b_gflops"]), _ratio(r["b_over_a"]),
              _ratio(r["a_speedup_vs_fp32"]), _ratio(r["b_speedup_vs_fp32"])] for r in rows]
    print(f"A: {path_a} ({a.metadata.hardware_name}, {a.metadata.calibration_date or 'undated'})")
    print(f"B: {path_b} ({b.metadata.hardware_name}, {b.metadata.calibration_date or 'undated'})")
    print()
    print(fmt.table(table, ["precision", "A GFLOPS", "B GFLOPS", "B / A", "A vs fp32", "B vs fp32"]))
    return 0


# ---------------------------------------------------------------------------------------------------
# Text rendering


def _num(value, digits: int = 1) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def _ratio(value) -> str:
    return DASH if value is None else f"{value:.2f}x"


def _ms(seconds) -> str:
    if seconds is None:
        return DASH
    return f"{seconds * 1e3:.3g}"


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape) if shape else DASH


def _peak(dev: dict, precision: str) -> str:
    value = dev["theoretical_peaks"].get(precision)
    if value is None:
        return DASH
    prov = (dev.get("peak_provenance") or {}).get(precision, {}).get("provenance", "")
    return f"{value:,.0f} {prov}".strip()


def precision_rows(dev: dict) -> tuple[list[list[str]], list[str]]:
    """The rows of the precision table (HEADER) and the reasons to print below it."""
    rows, reasons = [], []
    by_precision: dict[str, list[dict]] = {}
    for r in dev["results"]:
        by_precision.setdefault(r["precision"], []).append(r)
    for p, entry in dev["precisions"].items():
        details = entry.get("details") or {}
        if not entry.get("supported") or entry.get("measured_gflops") is None:
            rows.append([p, DASH, DASH, DASH, DASH, DASH, _peak(dev, p), DASH])
            if entry.get("failure_reason"):
                reasons.append(f"{dev['key']} {p}: {entry['failure_reason']}")
            continue
        best_shape = details.get("best_shape")
        best = next((r for r in by_precision.get(p, []) if r["shape"] == best_shape), None)
        spread = (best or {}).get("spread") or {}
        latency = DASH if best is None else f"{_ms(best['median_s'])} ({_ms(spread.get('p10_s'))}-{_ms(spread.get('p90_s'))})"
        rows.append([p, _num(entry["measured_gflops"]), _shape(best_shape), _num(details.get("median_gflops")),
                     latency, DASH if entry.get("efficiency") is None else f"{entry['efficiency']:.0%}",
                     _peak(dev, p), _ratio(entry.get("speedup_vs_fp32"))])
        if details.get("stopped"):
            reasons.append(f"{dev['key']} {p}: {details['stopped']}")
    return rows, _shared_once(dev, reasons)


def _shared_once(dev: dict, reasons: list[str]) -> list[str]:
    """A reason every precision shares ("not run: replayed") once, not once per precision."""
    texts = {r.split(": ", 1)[1] for r in reasons}
    if len(reasons) > 1 and len(reasons) == len(dev["precisions"]) and len(texts) == 1:
        return [f"{dev['key']} all precisions: {texts.pop()}"]
    return reasons


def bandwidth_line(dev: dict) -> str:
    parts = []
    for b in dev.get("memory_bandwidth") or []:
        label = {"copy": "on-device copy", "host_to_device": "host to device"}.get(b.get("op"), b.get("op"))
        if b.get("status") == "ok":
            eff = f", {b['efficiency']:.0%} of {b['peak_gbps']:,.0f} GB/s {b.get('peak_provenance', '')}" \
                if b.get("efficiency") is not None else ""
            parts.append(f"{label} {b['gbps']:,.1f} GB/s ({b['bytes'] >> 20} MiB{eff})")
        else:
            peak = f"; spec {b['peak_gbps']:,.0f} GB/s" if b.get("peak_gbps") else ""
            parts.append(f"{label}: {b.get('reason') or b.get('status')}{peak}")
    return "memory: " + " · ".join(parts) if parts else "memory: not measured"


HEADER = ["precision", "best GFLOPS", "at shape", "median", "latency ms (p10-p90)", "efficiency",
          "peak (provenance)", "vs fp32"]


def render(data: dict) -> str:
    from gpudash import formatting as fmt

    header = HEADER
    title = f"benchmark · {data.get('source') or ''} · {data.get('mode') or 'quick'} sweep"
    if data.get("preset"):
        title += f" · preset {data['preset']}"
    lines = [title]
    for dev in data["devices"]:
        when = dev.get("measured_at") or ("not run: replayed" if dev.get("replayed") else "not run")
        took = f" · {dev['duration_s']:.1f} s" if dev.get("duration_s") else ""
        torch_v = f" · torch {dev['torch']}" if dev.get("torch") else ""
        lines += ["", f"[{dev['key']}] {dev['name']} · {when}{took}{torch_v}"]
        rows, reasons = precision_rows(dev)
        lines += [fmt.table(rows, header), bandwidth_line(dev)]
        lines += reasons + [f"note: {n}" for n in dev.get("notes") or []]
        from gpudash.cli.bench_plugins import render as render_plugins

        lines += render_plugins(dev)
    return "\n".join(lines)


def _render_presets() -> str:
    from gpudash import formatting as fmt
    from gpudash.measure.presets import PRESETS

    rows = [[p.name, p.hardware_name, p.device, p.platform, p.provenance,
             ", ".join(f"{k} {v:,.0f}" for k, v in p.theoretical_peaks.items())] for p in PRESETS.values()]
    return fmt.table(rows, ["preset", "hardware", "device", "platform", "peaks are", "GFLOPS by precision"])
