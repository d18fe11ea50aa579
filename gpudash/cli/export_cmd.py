"""`gpudash export`: recommended training settings (AMP, batch, dataloader, environment) as TOML or JSON.

Headless: never imports Textual. Progress goes to stderr, so `-o -` output can be piped.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gpudash.cli.arguments import add_device_option, add_force_option, add_output_option
from gpudash.errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "export",
        parents=parents,
        help="write recommended training settings (TOML/JSON) with reasons",
        description="Recommend training settings for one device (AMP dtype and loss scaling, TF32, fp8 readiness, "
        "batch size and gradient accumulation, dataloader, environment variables), each with its "
        "reason and provenance, and write them where training code can load them "
        "(gpudash.apply.load). Default output: gpudash.toml (gpudash.json with --format json) in "
        "the current directory. Exits 1 when the model does not fit in the device's memory even at a batch of "
        "one (the file is still written; the reason says what would make it fit).",
        epilog=exit_codes.epilog("export"),
    )
    add_output_option(
        p,
        "-o",
        "--output",
        metavar="PATH",
        default=None,
        help="file to write, '-' for stdout (default: gpudash.toml, or gpudash.json for --format json)",
    )
    add_force_option(p, state=True)
    p.add_argument("--format", choices=("toml", "json"), default="toml", help="output format (default: toml)")
    add_device_option(p, "the device to export for", repeatable=False, default="the first GPU, else the CPU")
    p.add_argument(
        "--bench",
        choices=("none", "quick", "full"),
        default=None,
        help="what to measure first: none = spec facts only (fast), quick = probes, a quick benchmark, "
        "checks and a memory trace (default: config export.bench, normally quick), full = the "
        "full benchmark",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions.export import DEFAULT_OUTPUT, export_settings, write_export
    from gpudash.cli.arguments import plugin_error, say
    from gpudash.fileio import check_output
    from gpudash.render.export import render

    args = ctx.args
    output = args.output or DEFAULT_OUTPUT[args.format]
    if output != "-":
        check_output(output, "-o")
    gathered = export_settings(
        ctx.session,
        device=args.device,
        bench=args.bench,
        status=lambda message: say(f"{message} ..."),
        on_plugin_error=plugin_error,
    )
    if output == "-":
        sys.stdout.write(render(gathered.settings, args.format))
        sys.stdout.flush()
        message = ""
    else:
        message = write_export(gathered.settings, output, args.format)
    head, settings = gathered.settings.header, gathered.settings
    took = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in gathered.timings.items())
    size = settings.value("batch.size")
    fits = settings.value("batch.fits")
    if size is not None:
        batch = f"batch {size} x {settings.value('batch.gradient_accumulation_steps', 1)}"
    else:
        batch = "the model does not fit in memory" if fits is False else "batch size not determined"
    summary = (
        f"{head['device']} ({head['device_key']}, {ctx.session.machine().label}): amp {settings.value('amp.dtype')}, "
        f"{batch}" + (f" [{took}]" if took else "")
    )
    say(f"{message}: {summary}" if message else f"exported {summary}")
    if fits is False:  # a finding: training as configured would run out of memory at once
        model = settings.value("batch.model")
        say(f"{model + ': ' if model else ''}{settings.get('batch.fits').reason}")
        return EXIT_FINDINGS
    return 0
