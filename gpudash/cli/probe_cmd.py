"""`gpudash probe`: run every precision on every device and check the numbers (or replay spec + torch).

Per precision and device three answers (spec, torch, verified), the maximum relative error and the rate
against fp32, drawn as a table (gpudash.render.probe). Progress goes to stderr, so `--json` output can be
piped. Live results are remembered for the TUI and gpudash.amp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "probe",
        parents=parents,
        help="run each precision and check its numbers (spec / torch / verified)",
        description="Run each precision (matmul against an fp64 reference, conversions bit for bit, an "
        "autocast training step, TF32's effect) on each device in a child process with a time "
        "limit, next to what the architecture tables and PyTorch claim.",
    )
    p.add_argument(
        "--device",
        metavar="N|KEY",
        action="append",
        help="probe only this device: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, "
        "cuda:N, or a GPU index N (repeatable; default: every device)",
    )
    p.add_argument(
        "--precision", metavar="NAME", action="append", help="probe only this precision (repeatable; default: all)"
    )
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
    p.set_defaults(func=run)


def _progress(event: dict) -> None:
    from gpudash.cli.arguments import say
    from gpudash.render.probe import progress_line

    line = progress_line(event)
    if line is not None:
        say(line)


def run(ctx: Context) -> int:
    from gpudash.actions.probe import probe
    from gpudash.cli.arguments import positive_seconds, say
    from gpudash.errors import UsageError
    from gpudash.precisions import PRECISIONS
    from gpudash.render.probe import render

    timeout = positive_seconds(ctx.args.timeout, "--timeout", ctx.session.config["probe"]["timeout_s"])
    unknown = [p for p in ctx.args.precision or () if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"--precision {unknown[0]!r}: expected one of {', '.join(PRECISIONS)}")
    result = probe(
        ctx.session,
        devices=ctx.args.device,
        precisions=ctx.args.precision,
        timeout_s=timeout,
        on_progress=_progress,
        on_status=say,
    )
    if result.saved_to is not None:
        say(f"remembered in {result.saved_to}")
    if result.save_error is not None:
        say(f"warning: not remembered: {result.save_error}")
    data = result.to_json()
    print(strict_json.dumps(data) if ctx.args.json else render(data))
    return 0
