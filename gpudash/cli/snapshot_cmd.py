"""`gpudash snapshot -o FILE`: record devices plus a few seconds of samples, for replay or bug reports."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gpudash.cli import exit_codes
from gpudash.cli.arguments import add_force_option, add_output_option

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers


MIN_INTERVAL_S = 0.05  # as config snapshot.interval allows: drivers take milliseconds per reading


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "snapshot",
        parents=parents,
        help="record this machine to a snapshot file",
        description="Record the devices and a few seconds of live samples to a JSON "
        "snapshot that --replay (or GPUDASH_REPLAY) plays back anywhere.",
        epilog=exit_codes.epilog("snapshot"),
    )
    add_output_option(
        p, "-o", "--output", metavar="FILE", required=True, help="where to write the snapshot ('-' for stdout)"
    )
    add_force_option(p)
    p.add_argument("--seconds", type=float, default=None, help="how long to sample (default: config snapshot.seconds)")
    p.add_argument(
        "--interval", type=float, default=None, help="seconds between samples (default: config snapshot.interval)"
    )
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace the hostname, UUIDs, serials, PCI ids and process names, commands, users and pids with "
        "stable placeholders, for a public bug report; the file still replays (default: config snapshot.redact)",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions import snapshot
    from gpudash.cli.arguments import say
    from gpudash.errors import UsageError
    from gpudash.fileio import REPLACED, STREAMED, check_output

    config = ctx.session.config["snapshot"]
    seconds = ctx.args.seconds if ctx.args.seconds is not None else config["seconds"]
    interval = ctx.args.interval if ctx.args.interval is not None else config["interval"]
    if not 0 <= seconds <= 3600:  # written so that NaN is refused too
        raise UsageError(f"--seconds: expected a value from 0 to 3600, got {seconds}")
    if not MIN_INTERVAL_S <= interval <= 60:  # the bounds of config snapshot.interval
        raise UsageError(f"--interval: expected seconds from {MIN_INTERVAL_S} to 60, got {interval}")
    check_output(ctx.args.output, "-o")  # fail before spending seconds sampling
    redact = ctx.args.redact if ctx.args.redact is not None else config["redact"]
    taken = snapshot.take(ctx.session, seconds, interval, redact=redact)
    how = snapshot.write(taken, ctx.args.output)
    if how != STREAMED:
        machine = ctx.session.machine()
        say(
            f"{'replaced' if how == REPLACED else 'wrote'} {ctx.args.output} ({len(machine.devices)} devices, {machine.label})"
        )
    return 0
