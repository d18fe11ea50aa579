"""A live (or replayed) `gpudash bench` run: measure, keep it in the history, save a profile, print it."""

from __future__ import annotations

import json
import sys


def measure(ctx) -> int:
    from pathlib import Path

    from gpudash.cli.arguments import positive_seconds
    from gpudash.cli.bench_args import choose_devices, parse_precisions
    from gpudash.cli.bench_progress import Progress
    from gpudash.cli.bench_render import render
    from gpudash.errors import UsageError
    from gpudash.measure.bench import bench_json, bench_machine
    from gpudash.measure.bench.store import append_run
    from gpudash.measure.calibration import presets

    args = ctx.args
    precisions = parse_precisions(args.precisions)
    preset = presets.get_preset(args.preset) if args.preset else None
    budget = positive_seconds(args.case_budget, "--case-budget", ctx.config["bench"]["case_budget_s"])
    timeout = positive_seconds(args.timeout, "--timeout", ctx.config["bench"]["timeout_s"])
    if args.save:
        folder = Path(args.save).parent
        if not folder.is_dir():  # fail before spending a minute measuring
            raise UsageError(f"--save {args.save}: folder {folder} does not exist")
    mode = args.mode or "quick"
    machine = ctx.machine()
    devices = choose_devices(ctx, machine, preset)
    if args.save and len(devices) > 1:
        keys = ", ".join(d.key for d in devices)
        raise UsageError(f"--save: a profile describes one device; choose one with --device ({keys})")
    if not machine.replayed:
        print(
            f"gpudash: benchmarking {', '.join(d.key for d in devices)} ({mode} sweep, case budget {budget:g} s) "
            "in a child process",
            file=sys.stderr,
            flush=True,
        )
    progress = Progress()
    try:
        reports = bench_machine(
            machine,
            devices=devices,
            precisions=precisions,
            mode=mode,
            case_budget_s=budget,
            timeout_s=timeout,
            on_progress=progress,
            peak_overrides=preset.peaks() if preset else None,
        )
    finally:
        progress.close()
    data = bench_json(machine, reports, mode, preset.name if preset else None)
    if not args.no_plugins and not preset:
        from gpudash.cli import bench_plugins

        bench_plugins.attach(data, bench_plugins.run_plugin_benchmarks(ctx, machine, devices, budget, timeout))
    if not machine.replayed:
        path = append_run(machine, data)
        print(f"gpudash: run kept in {path}", file=sys.stderr)
    if args.save:
        from gpudash.measure.calibration.profile import save_profile
        from gpudash.measure.calibration.report import profile_from_report

        report = next(iter(reports.values()))
        replaced = save_profile(profile_from_report(report, machine, preset.name if preset else None), args.save)
        print(f"gpudash: {'replaced' if replaced else 'wrote'} profile {args.save}", file=sys.stderr)
    if args.json:
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print(render(data))
    return 0
