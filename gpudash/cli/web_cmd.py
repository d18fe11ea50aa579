"""`gpudash web`: the dashboard in a browser; each tab runs `gpudash tui` in its own process."""

from __future__ import annotations

import os
import sys

from gpudash.cli import exit_codes
from gpudash.web.address import DEFAULT_HOST, DEFAULT_PORT


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "web",
        parents=parents,
        help="serve the dashboard to a web browser",
        description="Serve the live dashboard to web browsers (through textual-serve). Every browser tab "
        "runs its own `gpudash tui` process with this command's global options (--replay, --config, "
        "--plugins-dir, ...). There is no authentication: the server listens on this machine only unless "
        "--allow-remote is given; see docs/web.md for a reverse proxy with a login.",
        epilog=exit_codes.epilog("web"),
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=None,
        help=f"address to serve on (default {DEFAULT_HOST}:{DEFAULT_PORT}); a non-loopback one needs --allow-remote",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --listen address other machines can reach, and host names other than localhost (for a "
        "reverse proxy); there is no authentication: put a proxy with a login in front",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        metavar="N",
        default=None,
        help="browser sessions at once, each one gpudash process (default: config web.max_sessions)",
    )
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.cli import _global_options
    from gpudash.config import SCHEMA
    from gpudash.errors import UsageError
    from gpudash.web.address import check_listen, parse_listen
    from gpudash.web.command import options_as_argv, session_command

    listen = parse_listen(ctx.args.listen)
    remote = check_listen(listen, ctx.args.allow_remote)
    max_sessions = (
        ctx.args.max_sessions if ctx.args.max_sessions is not None else ctx.session.config["web"]["max_sessions"]
    )
    problem = SCHEMA["web"]["max_sessions"].problem(max_sessions)
    if problem:
        raise UsageError(f"--max-sessions: {problem}")
    if ctx.session.replay:  # one line now rather than a broken dashboard in every tab
        from gpudash.devices.snapshot_file import read_snapshot

        read_snapshot(ctx.session.replay)
    if remote:
        print(
            f"gpudash: warning: serving {listen} to other machines with no authentication: anyone who can reach "
            "it can use the dashboard; put a reverse proxy with a login in front (docs/web.md)",
            file=sys.stderr,
        )
    command = session_command(options_as_argv(ctx.args, _global_options(suppress=False)), server_pid=os.getpid())

    from gpudash.web.server import serve

    return serve(command, listen, max_sessions=max_sessions, allow_remote=ctx.args.allow_remote)
