"""`gpudash` / `gpudash tui`: the live dashboard. The only command that imports Textual."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "tui",
        parents=parents,
        help="open the live dashboard (the default)",
        description="Open the live terminal dashboard (what `gpudash` does with no command).",
        epilog=exit_codes.epilog("tui"),
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    ctx.session.start_machine()  # the drivers' children open their libraries while Textual is imported
    from gpudash.tui.app import run_app

    return run_app(ctx.session)
