"""`gpudash plugins`: every plugin found, where it came from, its hooks, what it provides, and load errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "plugins",
        parents=parents,
        help="list plugins, their hooks and load errors",
        description="List the plugins found through the 'gpudash' entry points and the "
        "plugin directories, loaded or not, with the reason when not. "
        "GPUDASH_LOAD_PLUGINS=a,b loads only those (empty: none).",
        epilog=exit_codes.epilog("plugins"),
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table (errors still go to stderr)")
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions.plugins import list_plugins
    from gpudash.cli.arguments import plugin_error
    from gpudash.render.plugins import render

    listing = list_plugins(ctx.session, on_error=plugin_error)
    if ctx.args.json:
        print(strict_json.dumps(listing.to_json()))
    else:
        print(render(listing.records, listing.load_env))
    return 0
