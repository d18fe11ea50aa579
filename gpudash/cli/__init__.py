"""The `gpudash` command line: argparse only, each subcommand in its own module, imported lazily.

`gpudash` alone opens the dashboard; every other command is headless and never imports Textual.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from gpudash import __version__
from gpudash.errors import GpudashError

# Subcommand name -> module under gpudash.cli defining `add_parser(subparsers, parents)` and `run(ctx)`.
COMMANDS = {
    "info": "info_cmd",
    "probe": "probe_cmd",
    "bench": "bench_cmd",
    "check": "check_cmd",
    "export": "export_cmd",
    "snapshot": "snapshot_cmd",
    "plugins": "plugins_cmd",
    "serve": "serve_cmd",
    "fleet": "fleet_cmd",
    "preflight": "preflight_cmd",
    "tui": "tui_cmd",
    "web": "web_cmd",
}

EXAMPLES = """examples:
  gpudash                                   the live dashboard
  gpudash info --json                       devices and their native precisions, as JSON
  gpudash probe                             which precisions really run, and how exactly
  gpudash export -o gpudash.toml            training settings, each with its reason
  gpudash --replay examples/snapshots/h100-80gb.json    any command on a recorded machine
"""


def _global_options(suppress: bool) -> argparse.ArgumentParser:
    """Options accepted before or after the subcommand (`gpudash --replay F info` == `gpudash info --replay F`)."""
    default = argparse.SUPPRESS if suppress else None
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("global options")
    group.add_argument(
        "--replay",
        metavar="FILE",
        default=default,
        help="behave as on the machine recorded in FILE (also GPUDASH_REPLAY)",
    )
    group.add_argument(
        "--config", metavar="PATH", default=default, help="config file (default: user config, then built-ins)"
    )
    group.add_argument(
        "--plugins-dir",
        metavar="DIR",
        action="append",
        default=default,
        help="also load one-file plugins from DIR (repeatable)",
    )
    return parent


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose error line shows what was typed safely (an escape sequence given as an argument
    is echoed as its escape, not sent to the terminal)."""

    def error(self, message: str) -> NoReturn:
        from gpudash.plain_text import one_line

        super().error(one_line(message, 2000))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpudash",
        description="See the accelerators on this machine, which precisions really work, and how fast. "
        "With no command, opens the live dashboard.",
        parents=[_global_options(suppress=False)],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpudash {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    parents = [_global_options(suppress=True)]
    for module in COMMANDS.values():
        importlib.import_module(f"gpudash.cli.{module}").add_parser(subparsers, parents)
    return parser


def main(argv: list[str] | None = None) -> int:
    from gpudash.lifetime import install_exit_handlers

    install_exit_handlers()  # SIGTERM/SIGHUP: one line, exit 143/129, every child process group killed
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args.command = "tui"
        args.func = importlib.import_module("gpudash.cli.tui_cmd").run
    from gpudash.cli import needs_torch
    from gpudash.cli.context import Context
    from gpudash.cli.option_values import check_option_values
    from gpudash.cli.output import guarded_stdout

    try:
        check_option_values(args)
        ctx = Context(args)
        needs_torch.check(args, ctx.session.config)  # the light install: one line and exit 3, before any work
        if args.command == "tui":  # the dashboard draws on the terminal itself
            return int(args.func(ctx) or 0)
        with guarded_stdout():  # a full disk is one line (gpudash.cli.output), not a traceback
            return int(args.func(ctx) or 0)
    except GpudashError as exc:
        from gpudash.plain_text import one_line

        print(f"gpudash: error: {one_line(exc, 4000)}", file=sys.stderr)  # what the user typed, shown safely
        return exc.exit_code
    except KeyboardInterrupt:
        print("gpudash: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `gpudash info | head`: the reader left; that is not an error
        sys.stderr.close()
        return 0
