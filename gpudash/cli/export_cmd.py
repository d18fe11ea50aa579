"""`gpudash export`: recommended training settings (AMP, batch, dataloader, environment) as TOML or JSON.

Headless: never imports Textual. Progress goes to stderr, so `-o -` output can be piped.
"""

from __future__ import annotations

import sys


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "export",
        parents=parents,
        help="write recommended training settings (TOML/JSON) with reasons",
        description="Recommend training settings for one device (AMP dtype and loss scaling, TF32, fp8 readiness, "
        "batch size and gradient accumulation, dataloader, environment variables), each with its "
        "reason and provenance, and write them where training code can load them "
        "(gpudash.apply.load). Default output: gpudash.toml (gpudash.json with --format json) in "
        "the current directory.",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        default=None,
        help="file to write, '-' for stdout (default: gpudash.toml, or gpudash.json for --format json)",
    )
    p.add_argument("--format", choices=("toml", "json"), default="toml", help="output format (default: toml)")
    p.add_argument(
        "--device",
        metavar="N|KEY",
        default=None,
        help="device to export for: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, cuda:N, "
        "or a GPU index N (default: the first GPU, else the CPU)",
    )
    p.add_argument(
        "--bench",
        choices=("none", "quick", "full"),
        default=None,
        help="what to measure first: none = spec facts only (fast), quick = probes, a quick benchmark, "
        "checks and a memory trace (default: config export.bench, normally quick), full = the "
        "full benchmark",
    )
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.export import DEFAULT_OUTPUT, export_settings, write_export

    args = ctx.args
    output = args.output or DEFAULT_OUTPUT[args.format]
    if output != "-":
        _check_output(output)
    machine = ctx.machine()

    def status(message: str) -> None:
        print(f"gpudash: {message} ...", file=sys.stderr, flush=True)

    gathered = export_settings(
        machine, ctx.config, device=args.device, bench=args.bench, plugin_dirs=ctx.plugin_dirs, status=status
    )
    message = write_export(gathered.settings, output, args.format)
    head, settings = gathered.settings.header, gathered.settings
    took = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in gathered.timings.items())
    summary = (
        f"{head['device']} ({head['device_key']}, {machine.label}): amp {settings.value('amp.dtype')}, "
        f"batch {settings.value('batch.size', 'n/a')} x {settings.value('batch.gradient_accumulation_steps', 1)}"
        + (f" [{took}]" if took else "")
    )
    print(f"gpudash: {message}: {summary}" if message else f"gpudash: exported {summary}", file=sys.stderr)
    return 0


def _check_output(output: str) -> None:
    """Fail before minutes of measuring if the file could not be written anyway."""
    import os
    from pathlib import Path

    from gpudash.errors import UsageError

    target = Path(output)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"-o {output}: is a directory, not a file")
    if not folder.is_dir():
        raise UsageError(f"-o {output}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"-o {output}: folder {folder} is not writable")
