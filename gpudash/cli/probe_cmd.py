"""`gpudash probe`: run every precision on every device and check the numbers (or replay spec + torch).

Per precision and device three answers (spec, torch, verified), the maximum relative error and the rate
against fp32, drawn as a table (gpudash.render.probe). Progress goes to stderr, so `--json` output can be
piped. Live results are remembered for the TUI and gpudash.amp. The exit code is 1 (EXIT_FINDINGS) when a
precision the spec calls native on a device failed there: the hardware should do it, and here it did not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.cli.arguments import add_device_option, add_force_option, add_precisions_option

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "probe",
        parents=parents,
        help="run each precision and check its numbers (spec / torch / verified)",
        description="Run each precision (matmul against an fp64 reference, conversions bit for bit, an "
        "autocast training step, TF32's effect) on each device in a child process with a time "
        "limit, next to what the architecture tables and PyTorch claim. Exits 1 when a precision "
        "the spec calls native fails.",
        epilog=exit_codes.epilog("probe"),
    )
    add_device_option(p, "probe only this device", repeatable=True, default="every device")
    add_precisions_option(p, "probe", "all", old_spelling=True)
    p.add_argument(
        "--json", action="store_true", help="print the probe JSON contract (docs/ARCHITECTURE.md) instead of a table"
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=None,
        help="time limit per precision and device, seconds (default: config probe.timeout_s)",
    )
    add_force_option(p, state=True)
    p.set_defaults(func=run)


def _progress(event: dict) -> None:
    from gpudash.cli.arguments import say
    from gpudash.render.probe import progress_line

    line = progress_line(event)
    if line is not None:
        say(line)


def run(ctx: Context) -> int:
    from gpudash.actions.probe import probe
    from gpudash.cli.arguments import chosen_precisions, positive_seconds, say
    from gpudash.errors import EXIT_FINDINGS, EXIT_OK
    from gpudash.render.probe import render

    args = ctx.args
    timeout = positive_seconds(args.timeout, "--timeout", ctx.session.config["probe"]["timeout_s"])
    precisions = chosen_precisions(args)
    result = probe(
        ctx.session,
        devices=args.device,
        precisions=precisions,
        timeout_s=timeout,
        on_progress=_progress,
        on_status=say,
    )
    if result.saved_to is not None:
        say(f"remembered in {result.saved_to}")
    if result.save_error is not None:
        say(f"warning: not remembered: {result.save_error}")
    data = result.to_json()
    print(strict_json.dumps(data) if args.json else render(data))
    failed = result.native_failures()
    if failed:
        listed = ", ".join(f"{key} {precision}" for key, precision in failed)
        say(f"failed where the spec says native: {listed}")
        return EXIT_FINDINGS
    return EXIT_OK
