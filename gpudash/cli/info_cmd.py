"""`gpudash info`: the devices once (like gpustat and `nvitop -1`), again and again with --watch, or the JSON
contract. The text never waits for torch: it is imported only when no vendor library saw a GPU torch could
(gpudash.actions.info); --json includes torch's view unless --no-torch."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.cli import exit_codes

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

MIN_WATCH_S = 0.1  # gpustat's floor for -i as well


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "info",
        parents=parents,
        help="list devices, architecture, live readings and GPU processes",
        description="List every device: architecture, the precisions it supports natively, and every reading "
        "gpustat and nvitop show (temperature, fan, P-state, utilization, encoder and decoder, power and "
        "limit, memory), MIG instances, and the processes on the GPUs. A reading the driver cannot give "
        "is n/a, with its reason below the table.",
        epilog=exit_codes.epilog("info"),
    )
    p.add_argument(
        "--json", action="store_true", help="print the info JSON contract (docs/ARCHITECTURE.md) instead of a table"
    )
    p.add_argument(
        "-i",
        "--watch",
        "--interval",
        dest="watch",
        metavar="SEC",
        type=float,
        nargs="?",
        const=1.0,
        default=None,
        help="read again every SEC seconds (default 1) until Ctrl-C: redrawn in place on a terminal, printed "
        "round after round to a pipe (with --json, one document per line)",
    )
    p.add_argument("--count", metavar="N", type=int, help="with --watch: stop after N rounds")
    p.add_argument("--show-uuid", action="store_true", help="show each GPU's (and MIG device's) UUID")
    p.add_argument(
        "-a",
        "--show-all",
        action="store_true",
        help="also the UUID, PCI bus, persistence and compute mode, display, uncorrected ECC errors, MIG mode "
        "and clocks of each GPU",
    )
    p.add_argument("--no-processes", action="store_true", help="leave out the table of GPU processes")
    p.add_argument("--no-torch", action="store_true", help="--json: leave out torch's view of the GPUs (faster)")
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace the hostname, UUIDs, PCI ids and process names, users and pids with placeholders",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    # The drivers' children open their libraries, describe the devices and read them (health counters too,
    # unless --watch, whose rounds read anew) while the rest is imported.
    ahead = ("health", "sample") if ctx.args.watch is None else ()
    ctx.session.start_machine(read_ahead=ahead)
    from gpudash.actions.info import info
    from gpudash.cli import terminal
    from gpudash.errors import UsageError

    args = ctx.args
    # Imported now, while the children open their drivers, rather than once their answers are read.
    importlib.import_module("gpudash.health.device_summary")
    importlib.import_module("gpudash.info" if args.json else "gpudash.render.info")
    if args.count is not None and args.watch is None:
        raise UsageError("--count: only with --watch")
    if args.count is not None and args.count < 1:
        raise UsageError(f"--count: expected a positive number of rounds, got {args.count}")
    if args.watch is not None and not args.watch >= MIN_WATCH_S:
        raise UsageError(f"--watch: expected at least {MIN_WATCH_S:g} seconds, got {args.watch:g}")
    # JSON keeps torch's view (its answers per precision are part of the contract); the text does without.
    include_torch = (not args.no_torch) if args.json else None
    color = ctx.color()
    idle = None
    if args.watch is not None:  # rounds are readings over time: allocated-but-idle can be judged over them
        from gpudash.allocation.idle import IdleRule, IdleWatch

        idle = IdleWatch(IdleRule.from_config(ctx.session.config))

    def frame(width: int | None) -> str:
        data = info(ctx.session, include_torch=include_torch, redact=args.redact, idle=idle)
        if args.json:
            return strict_json.dumps(data, indent=None if args.watch is not None else 2)
        from gpudash.render.info import render

        return render(
            data,
            color=color,
            width=width,
            show_uuid=args.show_uuid,
            show_all=args.show_all,
            processes=not args.no_processes,
        )

    if args.watch is None:
        print(frame(terminal.columns()))
        return 0
    from gpudash.cli.watch import watch

    return watch(
        frame, args.watch, args.count, redraw=terminal.is_terminal() and not args.json, blank_line=not args.json
    )
