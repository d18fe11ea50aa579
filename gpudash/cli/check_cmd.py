"""`gpudash check`: run every plugin check (the built-in ROCm checks among them) on every device.

Each check runs in a child process with a time limit. The table gives status, summary, the fix and the
environment variables to set; --json gives the same on stdout, with nothing else there. A warning or a
failing check is a finding, not an error: the exit code is 0 unless the command itself was misused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.errors import UsageError

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "check",
        parents=parents,
        help="run the known-bug checks (ROCm bf16, hipBLASLt, ...)",
        description="Run every check the plugins register on every device (or one), each "
        "in a child process with a time limit. On a replayed machine, checks "
        "that need the device are skipped; table-based checks still run.",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    p.add_argument(
        "--device",
        metavar="N",
        help="only this device: its position in `gpudash info` (0 = first) or its key, e.g. amd:0",
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=None,
        help="time limit per check in seconds (default: each check's own, else 60)",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions.check import run as run_checks
    from gpudash.cli.arguments import plugin_error
    from gpudash.render.check import render

    if ctx.args.timeout is not None and not 0 < ctx.args.timeout <= 3600:
        raise UsageError(f"--timeout: expected seconds from 0 to 3600, got {ctx.args.timeout:g}")
    found = run_checks(ctx.session, device=ctx.args.device, timeout_s=ctx.args.timeout, on_plugin_error=plugin_error)
    if ctx.args.json:
        print(strict_json.dumps(found.to_json()))
    else:
        print(render(found.results, found.machine.label, found.check_count, len(found.devices), found.plugin_errors))
    return 0
