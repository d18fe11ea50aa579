"""`gpudash snapshot -o FILE`: record devices plus a few seconds of samples, for replay or bug reports."""

from __future__ import annotations

import json
import sys


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "snapshot",
        parents=parents,
        help="record this machine to a snapshot file",
        description="Record the devices and a few seconds of live samples to a JSON "
        "snapshot that --replay (or GPUDASH_REPLAY) plays back anywhere.",
    )
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="where to write the snapshot ('-' for stdout)")
    p.add_argument("--seconds", type=float, default=None, help="how long to sample (default: config snapshot.seconds)")
    p.add_argument(
        "--interval", type=float, default=None, help="seconds between samples (default: config snapshot.interval)"
    )
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.errors import UsageError
    from gpudash.fileio import atomic_write_text
    from gpudash.record import record

    seconds = ctx.args.seconds if ctx.args.seconds is not None else ctx.config["snapshot"]["seconds"]
    interval = ctx.args.interval if ctx.args.interval is not None else ctx.config["snapshot"]["interval"]
    if seconds < 0 or seconds > 3600:
        raise UsageError(f"--seconds: expected a value from 0 to 3600, got {seconds}")
    if interval <= 0:
        raise UsageError(f"--interval: expected a positive number, got {interval}")
    if ctx.args.output != "-":  # fail before spending seconds sampling
        from pathlib import Path

        folder = Path(ctx.args.output).parent
        if not folder.is_dir():
            raise UsageError(f"-o {ctx.args.output}: folder {folder} does not exist")
    machine = ctx.machine()
    text = json.dumps(record(machine, seconds, interval), indent=1) + "\n"
    if ctx.args.output == "-":
        sys.stdout.write(text)
        return 0
    replaced = atomic_write_text(ctx.args.output, text)
    verb = "replaced" if replaced else "wrote"
    print(f"gpudash: {verb} {ctx.args.output} ({len(machine.devices)} devices, {machine.label})", file=sys.stderr)
    return 0
