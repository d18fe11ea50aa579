"""`gpudash bench`: matmul throughput per precision over a sweep of shapes, and memory bandwidth.

Per precision: the best shape's GFLOPS, the median over shapes, latency median and spread, efficiency
against the theoretical peak (with the peak's provenance) and the speedup over fp32. Progress goes to
stderr, so `--json` can be piped. Each live run is kept in the history store for before/after
comparisons; `--save` writes a calibration profile, `--load` shows one, `--compare A B` sets two side by side.
The parts: `bench_measure` (a run), `bench_profiles` (--load, --compare), `bench_render` (the tables).
"""

from __future__ import annotations

from gpudash.cli.bench_measure import measure
from gpudash.cli.bench_profiles import compare, show_profile
from gpudash.cli.bench_render import render_presets
from gpudash.errors import UsageError


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "bench",
        parents=parents,
        help="measure matmul throughput per precision and memory bandwidth",
        description="Time matmuls in every precision over a sweep of shapes (warm-up, repetitions within a "
        "per-case time budget, median and spread) in a child process with a time limit, plus "
        "memory bandwidth. Efficiency is against the theoretical peak, labelled with where the "
        "peak came from.",
    )
    p.add_argument(
        "--device",
        metavar="N|KEY",
        action="append",
        help="benchmark only this device: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, "
        "cuda:N, or a GPU index N (repeatable; default: every device)",
    )
    p.add_argument(
        "--precisions",
        metavar="LIST",
        help="comma-separated precisions, e.g. fp32,bf16,int8 (default: every precision the "
        "architecture has, native or emulated)",
    )
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
    p.add_argument("--json", action="store_true", help="print the bench JSON contract (design.md) instead of a table")
    p.add_argument("--save", metavar="PATH", help="also write a calibration profile (JSON) of the device to PATH")
    p.add_argument("--load", metavar="PROFILE", help="show a saved profile instead of measuring")
    p.add_argument("--compare", metavar="PROFILE", nargs=2, help="compare two saved profiles (B against A)")
    p.add_argument(
        "--preset", metavar="NAME", help="use a named part's theoretical peaks (gpudash bench --preset list shows them)"
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


def run(ctx) -> int:
    args = ctx.args
    if args.load and args.compare:
        raise UsageError("--load and --compare: choose one")
    if args.load:
        return show_profile(args.load, args.json)
    if args.compare:
        return compare(*args.compare, as_json=args.json)
    if args.preset == "list":
        print(render_presets())
        return 0
    return measure(ctx)
