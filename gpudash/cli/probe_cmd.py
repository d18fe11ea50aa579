"""`gpudash probe`: run every precision on every device and check the numbers (or replay spec + torch).

Per precision and device three answers (spec, torch, verified), the maximum relative error and the rate
against fp32, drawn as a table by `probe_render`. Progress goes to stderr, so `--json` output can be piped.
Live results are remembered for the TUI and gpudash.amp.
"""

from __future__ import annotations

import json
import sys


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "probe",
        parents=parents,
        help="run each precision and check its numbers (spec / torch / verified)",
        description="Run each precision (matmul against an fp64 reference, conversions bit for bit, an "
        "autocast training step, TF32's effect) on each device in a child process with a time "
        "limit, next to what the architecture tables and PyTorch claim.",
    )
    p.add_argument(
        "--device",
        metavar="N|KEY",
        action="append",
        help="probe only this device: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, "
        "cuda:N, or a GPU index N (repeatable; default: every device)",
    )
    p.add_argument(
        "--precision", metavar="NAME", action="append", help="probe only this precision (repeatable; default: all)"
    )
    p.add_argument("--json", action="store_true", help="print the probe JSON contract (design.md) instead of a table")
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        default=None,
        help="time limit per precision and device, seconds (default: config probe.timeout_s)",
    )
    p.set_defaults(func=run)


def _progress(event: dict) -> None:
    if event["event"] != "done" or event.get("reason") == "not run: cancelled":
        return
    reason = f": {event['reason']}" if event.get("reason") and event["verdict"] == "failed" else ""
    print(
        f"gpudash: [{event['done']}/{event['total']}] {event['device']} {event['precision']}: "
        f"{event['verdict']} ({event['seconds']:.1f} s){reason}",
        file=sys.stderr,
        flush=True,
    )


def run(ctx) -> int:
    import threading

    from gpudash.cli.arguments import positive_seconds
    from gpudash.cli.probe_render import render
    from gpudash.errors import UsageError
    from gpudash.measure import probe
    from gpudash.measure.interruptible import run_interruptibly
    from gpudash.precisions import PRECISIONS

    timeout = positive_seconds(ctx.args.timeout, "--timeout", ctx.config["probe"]["timeout_s"])
    unknown = [p for p in ctx.args.precision or () if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"--precision {unknown[0]!r}: expected one of {', '.join(PRECISIONS)}")
    machine = ctx.machine()
    devices = [probe.find_device(machine, d) for d in ctx.args.device] if ctx.args.device else None
    if not machine.replayed:
        print(
            f"gpudash: probing {len(devices or machine.devices)} device(s) in a child process "
            f"(limit {timeout:g} s per precision)",
            file=sys.stderr,
            flush=True,
        )
    # Ctrl-C sets `cancel`, and the runner kills the child process before we exit.
    cancel = threading.Event()
    matrices = run_interruptibly(
        lambda: probe.probe_machine(
            machine,
            devices=devices,
            timeout_s=timeout,
            cancel=cancel,
            on_progress=_progress,
            precisions=ctx.args.precision,
        ),
        cancel,
    )
    if not machine.replayed:
        path = probe.remember(machine, matrices)
        print(f"gpudash: remembered in {path}", file=sys.stderr)
    data = probe.probe_json(machine, matrices)
    if ctx.args.json:
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print(render(data))
    return 0
