"""`gpudash check`: run every plugin check (the built-in ROCm checks among them) on every device.

Each check runs in a child process with a time limit. The table gives status, summary, the fix and the
environment variables to set; --json gives the same on stdout, with nothing else there. A warning or a
failing check is a finding, not an error: the exit code is 0 unless the command itself was misused.
"""

from __future__ import annotations

import json
from collections import Counter

from gpudash.errors import UsageError


def add_parser(subparsers, parents) -> None:
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


def select_devices(machine, wanted: str | None):
    if wanted is None:
        return list(machine.devices)
    keys = [d.key for d in machine.devices]
    if wanted in keys:
        return [machine.devices[keys.index(wanted)]]
    if wanted.isdigit() and int(wanted) < len(machine.devices):
        return [machine.devices[int(wanted)]]
    listing = ", ".join(f"{i} = {k}" for i, k in enumerate(keys)) or "none"
    raise UsageError(f"--device {wanted}: no such device (devices: {listing})")


def run(ctx) -> int:
    from gpudash.cli.plugins_cmd import plugin_manager_for
    from gpudash.devices import add_torch_view
    from gpudash.plugin_manager import collect_checks, run_checks
    from gpudash.plugin_manager.remembered import remember_checks

    if ctx.args.timeout is not None and not 0 < ctx.args.timeout <= 3600:
        raise UsageError(f"--timeout: expected seconds from 0 to 3600, got {ctx.args.timeout:g}")
    pm = plugin_manager_for(ctx)
    machine = ctx.machine(include_torch=False)
    devices = select_devices(machine, ctx.args.device)
    if any(d.vendor != "cpu" for d in devices):  # GPU checks need torch's device numbering
        add_torch_view(machine)
    results = run_checks(machine, pm, timeout_s=ctx.args.timeout, devices=devices)
    remember_checks(machine, results)  # for `gpudash serve` and the fleet view
    failed_plugins = [{"plugin": r.name, "errors": r.errors} for r in pm.records.values() if r.errors]
    if ctx.args.json:
        print(
            json.dumps(
                {
                    "version": 1,
                    "replayed": machine.replayed,
                    "source": machine.label,
                    "checks": [r.to_dict() for r in results],
                    "plugin_errors": failed_plugins,
                },
                indent=2,
            )
        )
        return 0
    print(render(results, machine.label, len(collect_checks(pm)), len(devices), failed_plugins))
    return 0


def _rows(results):
    """Results in table order; a run of same-summary skips on one device from one plugin becomes one row."""
    rows = []
    for r in results:
        last = rows[-1] if rows else None
        if (
            last
            and r.status == "skip"
            and last["status"] == "skip"
            and last["device"] == r.device
            and last["plugin"] == r.plugin
            and last["summary"] == r.summary
        ):
            last["count"] += 1
            continue
        rows.append(
            {
                "device": r.device,
                "plugin": r.plugin,
                "check": r.check,
                "status": r.status,
                "summary": r.summary,
                "remediation": r.remediation,
                "env": r.env,
                "count": 1,
            }
        )
    return rows


def render(results, source: str, n_checks: int, n_devices: int, failed_plugins) -> str:
    counts = Counter(r.status for r in results)
    tally = ", ".join(f"{counts[s]} {s}" for s in ("pass", "warn", "fail", "error", "skip") if counts[s])
    devices = f"{n_devices} device{'s' if n_devices != 1 else ''}"
    lines = [f"[{source}]  {n_checks} checks on {devices}: {tally or 'nothing ran'}"]
    rows = _rows(results)
    labels = [
        f"{row['plugin']} ({row['count']} checks)" if row["count"] > 1 else f"{row['plugin']}/{row['check']}"
        for row in rows
    ]
    w_dev = max([len("device")] + [len(row["device"]) for row in rows])
    w_check = max([len("check")] + [len(label) for label in labels])
    w_status = len("status")
    lines.append(f"{'device'.ljust(w_dev)}  {'check'.ljust(w_check)}  {'status'.ljust(w_status)}  summary")
    pad = " " * (w_dev + w_check + w_status + 6)
    for row, label in zip(rows, labels):
        lines.append(
            f"{row['device'].ljust(w_dev)}  {label.ljust(w_check)}  {row['status'].ljust(w_status)}  {row['summary']}"
        )
        if row["status"] != "skip":
            if row["remediation"]:
                lines.append(f"{pad}fix: {row['remediation']}")
            if row["env"]:
                lines.append(f"{pad}env: " + " ".join(f"{k}={v}" for k, v in row["env"].items()))
    for failed in failed_plugins:
        lines.append(f"plugin {failed['plugin']} had errors: {'; '.join(failed['errors'])}")
    return "\n".join(lines)
