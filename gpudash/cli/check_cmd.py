"""`gpudash check`: run every plugin check (the built-in ROCm checks among them) on every device.

Each check runs in a child process with a time limit. The table gives status, summary, the fix and the
environment variables to set; --json gives the same on stdout, with nothing else there. A failing check, or
one that broke (raised, hung, crashed: status "error") is reported; CRITICAL is a finding: exit code 1
(EXIT_FINDINGS), after the whole report. A warning, an UNKNOWN or a skipped check leaves it 0.

Beside the plugins' checks run gpudash's health checks (gpudash.health, docs/health.md). Every result carries an
id, a severity, the device, the evidence and an action; the exit code is 1 when anything is CRITICAL, else 0
(`--exit-codes nagios`: 0/1/2/3 for the worst of OK/WARN/CRITICAL/UNKNOWN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.cli.arguments import add_device_option, add_force_option
from gpudash.errors import UsageError

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

from gpudash.cli import exit_codes


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "check",
        parents=parents,
        help="run the known-bug checks (ROCm bf16, hipBLASLt, ...)",
        description="Run every check the plugins register on every device (or one), each "
        "in a child process with a time limit. On a replayed machine, checks "
        "that need the device are skipped; table-based checks still run. gpudash's health checks "
        "(docs/health.md) run too. Exits 1 when a result is CRITICAL (a failed check); warnings, "
        "UNKNOWN and errors do not.",
        epilog=exit_codes.epilog("check"),
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout")
    add_device_option(p, "check only this device", repeatable=True, default="every device")
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=None,
        help="time limit per check in seconds (default: each check's own, else 60)",
    )
    add_force_option(p, state=True)
    p.add_argument(
        "--expect-gpus",
        metavar="N",
        type=int,
        default=None,
        help="GPUs this node should have; fewer is CRITICAL (default: the config's [health] expect_gpus)",
    )
    p.add_argument(
        "--exit-codes",
        choices=("default", "nagios"),
        default="default",
        help="default: 1 when anything is CRITICAL, else 0; nagios: 0/1/2/3 for OK/WARN/CRITICAL/UNKNOWN",
    )
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.actions.check import run as run_checks
    from gpudash.cli.arguments import plugin_error, say
    from gpudash.health.contract import exit_code
    from gpudash.plugins_api.checks import ERROR, FAIL
    from gpudash.render.check import render
    from gpudash.render.health import render_health

    if ctx.args.timeout is not None and not 0 < ctx.args.timeout <= 3600:
        raise UsageError(f"--timeout: expected seconds from 0 to 3600, got {ctx.args.timeout:g}")
    if ctx.args.expect_gpus is not None and not 0 <= ctx.args.expect_gpus <= 1024:
        raise UsageError(f"--expect-gpus: expected a count from 0 to 1024, got {ctx.args.expect_gpus}")
    found = run_checks(
        ctx.session,
        device=ctx.args.device,
        timeout_s=ctx.args.timeout,
        on_plugin_error=plugin_error,
        expect_gpus=ctx.args.expect_gpus,
    )
    if ctx.args.json:
        print(strict_json.dumps(found.to_json()))
    else:
        print(
            render(
                found.results,
                found.machine.label,
                found.check_count,
                len(found.devices),
                found.plugin_errors,
                color=ctx.color(),
            )
        )
        if found.health:
            print("\n" + render_health(found.health))
        if found.remembered:
            from gpudash.render.health_memory import memory_lines

            print("\n" + "\n".join(memory_lines(found.remembered, found.device_of())))
    bad = [r for r in found.results if r.status in (FAIL, ERROR)]
    if bad:
        counts = {status: sum(r.status == status for r in bad) for status in (FAIL, ERROR)}
        summary = ", ".join(f"{n} {'failed' if status == FAIL else 'errored'}" for status, n in counts.items() if n)
        say(f"checks: {summary}")
    return exit_code(found.severities(), ctx.args.exit_codes)
