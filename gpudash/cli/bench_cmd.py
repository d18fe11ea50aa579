"""`gpudash bench`: matmul throughput per precision over a sweep of shapes, and memory bandwidth.

Per precision: the best shape's GFLOPS, the median over shapes, latency median and spread, efficiency
against the theoretical peak (with the peak's provenance) and the speedup over fp32; the plugins'
benchmarks below. Progress goes to stderr, so `--json` can be piped. Each live run is kept in the bench
history for before/after comparisons (gpudash.actions.bench); `--save` writes a calibration profile,
`--load` shows one, `--compare A B` sets two side by side (gpudash.actions.profiles).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.cli.arguments import add_device_option, add_force_option, add_output_option, add_precisions_option
from gpudash.errors import EXIT_FINDINGS, GpudashError, UsageError

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "bench",
        parents=parents,
        help="measure matmul throughput per precision and memory bandwidth",
        description="Time matmuls in every precision over a sweep of shapes (warm-up, repetitions within a "
        "per-case time budget, median and spread) in a child process with a time limit, plus "
        "memory bandwidth. Efficiency is against the theoretical peak, labelled with where the "
        "peak came from.",
        epilog=exit_codes.epilog("bench"),
    )
    add_device_option(p, "benchmark only this device", repeatable=True, default="every device")
    add_precisions_option(p, "benchmark", "every precision the architecture has, native or emulated")
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        dest="mode",
        action="store_const",
        const="quick",
        help="a short sweep of shapes chosen to reach near-peak throughput (the default)",
    )
    size.add_argument(
        "--full",
        dest="mode",
        action="store_const",
        const="full",
        help="a long sweep (mamf-finder style: M over a range at fixed N and K, plus squares)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the bench JSON contract (docs/ARCHITECTURE.md) instead of a table"
    )
    add_output_option(
        p,
        "--save",
        rewritten=True,
        metavar="PATH",
        help="also write a calibration profile (JSON) of the device to PATH (a regular file or a new one)",
    )
    add_force_option(p, state=True)
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --save: replace the hostname in the profile with a placeholder, for sharing it (default: config "
        "snapshot.redact, the one setting for files meant to be shared)",
    )
    p.add_argument("--load", metavar="PROFILE", help="show a saved profile instead of measuring")
    p.add_argument("--compare", metavar="PROFILE", nargs=2, help="compare two saved profiles (B against A)")
    p.add_argument(
        "--preset", metavar="NAME", help="use a named part's theoretical peaks (gpudash bench --preset list shows them)"
    )
    p.add_argument(
        "--operations",
        metavar="LIST",
        action="append",
        help="measure only these, comma-separated: matmul (the precision sweep), memory (bandwidth); "
        "the calibration seed's option (default: both)",
    )
    p.add_argument("--no-plugins", action="store_true", help="skip the benchmarks that plugins add")
    p.add_argument(
        "--skip-platform-check",
        action="store_true",
        help="use --preset even on a platform it was not made for (efficiencies will be wrong)",
    )
    p.add_argument(
        "--case-budget",
        metavar="S",
        type=float,
        default=None,
        help="most seconds one shape may take; a slower call skips the larger shapes "
        "(default: config bench.case_budget_s)",
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=None,
        help="time limit for the whole run, seconds (default: config bench.timeout_s)",
    )
    p.set_defaults(func=run, mode=None)


def run(ctx: Context) -> int:
    args = ctx.args
    if args.load and args.compare:
        raise UsageError("--load and --compare: choose one")
    if args.load:
        return show_profile(args.load, args.json)
    if args.compare:
        return compare(args.compare[0], args.compare[1], args.json)
    if args.preset == "list":
        from gpudash.actions.profiles import presets
        from gpudash.render.bench import render_presets

        print(render_presets(presets()))
        return 0
    return measure(ctx)


def measure(ctx: Context) -> int:
    """A live (or replayed) run: plan it, check the platform, measure, keep, save a profile, print it."""
    from gpudash.actions import bench, profiles
    from gpudash.cli.arguments import plugin_error, positive_seconds, precision_list, say
    from gpudash.fileio import check_output, is_stdout
    from gpudash.render.bench import render
    from gpudash.render.progress import Progress

    args, config = ctx.args, ctx.session.config
    precisions = precision_list(args.precisions)
    preset = profiles.preset(args.preset) if args.preset else None
    budget = positive_seconds(args.case_budget, "--case-budget", config["bench"]["case_budget_s"])
    timeout = positive_seconds(args.timeout, "--timeout", config["bench"]["timeout_s"])
    if args.redact is not None and not args.save:
        raise UsageError("--redact: only with --save (the profile is what gets shared)")
    if args.save:
        if is_stdout(args.save):  # the profile and the benchmark would run together into one unreadable stream
            raise UsageError(f"--save {args.save}: the profile is a file of its own; name a file, not stdout")
        check_output(args.save, "--save", streams=False)
    plan = bench.plan(
        ctx.session,
        devices=args.device,
        mode=args.mode or "quick",
        precisions=precisions,
        preset=preset,
        case_budget_s=budget,
        timeout_s=timeout,
        plugins=not args.no_plugins,
        operations=[o.strip() for item in args.operations for o in item.split(",") if o.strip()]
        if args.operations
        else None,
    )
    for mismatch in plan.mismatches:
        if args.skip_platform_check:
            say(
                f"warning: --skip-platform-check: preset '{mismatch.preset}' {mismatch.problems[0]}; "
                "its peaks will give wrong efficiencies here"
            )
            continue
        print(mismatch.message, file=sys.stderr)
        fits = ", ".join(mismatch.fits) or "none"
        # exit 1, as the calibration seed's tool does on a platform mismatch ("Exits with error code 1")
        say(f"error: --preset {mismatch.preset}: platform mismatch ({mismatch.problems[0]}); presets that fit: {fits}")
        return EXIT_FINDINGS
    if args.save and len(plan.devices) > 1:
        keys = ", ".join(d.key for d in plan.devices)
        raise UsageError(f"--save: a profile describes one device; choose one with --device ({keys})")
    progress = Progress()

    def status(message: str) -> None:  # a message starts on a line of its own, below the bar
        progress.close()
        say(message)

    def load_error(plugin: str, message: str) -> None:
        progress.close()
        plugin_error(plugin, message)

    try:
        result = bench.run(ctx.session, plan, on_progress=progress, on_status=status, on_plugin_error=load_error)
    finally:
        progress.close()
    assert result.data is not None  # nothing cancels a command-line run but Ctrl-C, which raises
    if result.history_path is not None:
        say(f"run kept in {result.history_path}")
    if result.save_error is not None:
        say(f"warning: run not kept: {result.save_error}")
    shown = strict_json.dumps(result.data) if args.json else render(result.data)
    if args.save:
        redact = args.redact if args.redact is not None else config["snapshot"]["redact"]
        try:
            replaced = profiles.save(result, args.save, redact=redact)
        except GpudashError as exc:  # a full disk, or the path changed since the check: the run is still shown
            print(shown)
            raise type(exc)(f"--save {exc}") from None
        say(f"{'replaced' if replaced else 'wrote'} profile {args.save}")
    print(shown)
    return 0


def show_profile(path: str, as_json: bool) -> int:
    from gpudash.actions.profiles import load
    from gpudash.render.bench import render_profile

    saved = load(path)
    if as_json:
        print(strict_json.dumps(saved.to_json()))
    else:
        print(render_profile(path, saved.profile.metadata, saved.bench_data()))
    return 0


def compare(path_a: str, path_b: str, as_json: bool) -> int:
    from gpudash.actions.profiles import compare as compare_profiles
    from gpudash.render.bench import render_comparison

    found = compare_profiles(path_a, path_b)
    if as_json:
        print(strict_json.dumps(found.to_json()))
    else:
        meta_a, meta_b = found.a.profile.metadata, found.b.profile.metadata
        print(render_comparison(path_a, meta_a, path_b, meta_b, found.rows))
    return 0
