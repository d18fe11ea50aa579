"""`gpudash info`: a one-shot table of the devices (like gpustat), or the JSON contract."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "info",
        parents=parents,
        help="list devices, architecture and live readings once",
        description="List every device once: architecture, memory, load and the "
        "precisions its architecture supports natively.",
    )
    p.add_argument(
        "--json", action="store_true", help="print the info JSON contract (docs/ARCHITECTURE.md) instead of a table"
    )
    p.add_argument("--no-torch", action="store_true", help="skip torch's view of the GPUs (faster)")
    p.add_argument(
        "--redact",
        action="store_true",
        help="replace the hostname, UUIDs, PCI ids and process names, users and pids with placeholders",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions.info import info
    from gpudash.render.info import render

    data = info(ctx.session, include_torch=not ctx.args.no_torch, redact=ctx.args.redact)
    print(strict_json.dumps(data) if ctx.args.json else render(data))
    return 0
