"""`gpudash probe`: run every precision on every device and check the numbers (or replay spec + torch).

Rows are precisions; per device three answers side by side (spec, torch, verified), the maximum relative
error and the rate against fp32; reasons below the table. Progress goes to stderr, so `--json` output can
be piped. Live results are remembered for the TUI and gpudash.amp.
"""

from __future__ import annotations

import json
import sys

GLYPH_SPEC = {"native": "✓", "emulated": "⚠", "absent": "✗"}
GLYPH_BOOL = {True: "✓", False: "✗", None: "–"}
GLYPH_VERDICT = {"verified": "✓", "slow_reference": "⚠ slow", "failed": "✗", "not_run": "–"}
LEGEND = ("spec: ✓ native ⚠ emulated ✗ absent · torch: ✓ claims it ✗ does not – no query/not recorded · "
          "verified: ✓ correct ⚠ slow reference path ✗ failed – not run")


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "probe", parents=parents, help="run each precision and check its numbers (spec / torch / verified)",
        description="Run each precision (matmul against an fp64 reference, conversions bit for bit, an "
                    "autocast training step, TF32's effect) on each device in a child process with a time "
                    "limit, next to what the architecture tables and PyTorch claim.")
    p.add_argument("--device", metavar="N|KEY", action="append",
                   help="probe only this device: a key as `gpudash info` shows it (cpu:0, nvidia:1), cpu, "
                        "cuda:N, or a GPU index N (repeatable; default: every device)")
    p.add_argument("--precision", metavar="NAME", action="append",
                   help="probe only this precision (repeatable; default: all)")
    p.add_argument("--json", action="store_true", help="print the probe JSON contract (design.md) instead of a table")
    p.add_argument("--timeout", metavar="S", type=float, default=None,
                   help="time limit per precision and device, seconds (default: config probe.timeout_s)")
    p.set_defaults(func=run)


def _progress(event: dict) -> None:
    if event["event"] != "done" or event.get("reason") == "not run: cancelled":
        return
    reason = f": {event['reason']}" if event.get("reason") and event["verdict"] == "failed" else ""
    print(f"gpudash: [{event['done']}/{event['total']}] {event['device']} {event['precision']}: "
          f"{event['verdict']} ({event['seconds']:.1f} s){reason}", file=sys.stderr, flush=True)


def run(ctx) -> int:
    from gpudash.errors import UsageError
    from gpudash.measure import probe
    from gpudash.precisions import PRECISIONS

    timeout = ctx.args.timeout if ctx.args.timeout is not None else ctx.config["probe"]["timeout_s"]
    if not timeout > 0:
        raise UsageError(f"--timeout: expected a positive number of seconds, got {ctx.args.timeout}")
    unknown = [p for p in ctx.args.precision or () if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"--precision {unknown[0]!r}: expected one of {', '.join(PRECISIONS)}")
    machine = ctx.machine()
    devices = [probe.find_device(machine, d) for d in ctx.args.device] if ctx.args.device else None
    if not machine.replayed:
        print(f"gpudash: probing {len(devices or machine.devices)} device(s) in a child process "
              f"(limit {timeout:g} s per precision)", file=sys.stderr, flush=True)
    matrices = _probe_interruptibly(probe.probe_machine, machine, devices=devices, timeout_s=timeout,
                                    on_progress=_progress, precisions=ctx.args.precision)
    if not machine.replayed:
        path = probe.remember(machine, matrices)
        print(f"gpudash: remembered in {path}", file=sys.stderr)
    data = probe.probe_json(machine, matrices)
    if ctx.args.json:
        print(json.dumps(data, indent=2, allow_nan=False))
    else:
        print(render(data))
    return 0


def _probe_interruptibly(probe_machine, machine, **kwargs):
    """probe_machine in a worker thread, so Ctrl-C cancels it: the runner then kills the child process
    (which lives in its own session and would not see the terminal's SIGINT) before we exit."""
    import threading

    cancel, finished = threading.Event(), threading.Event()
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["value"] = probe_machine(machine, cancel=cancel, **kwargs)
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=work, name="gpudash-probe", daemon=True).start()
    try:
        while not finished.wait(0.2):  # an Event, not Thread.join: an interrupted join can return early
            pass
    except KeyboardInterrupt:
        cancel.set()
        finished.wait(10)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _error(value) -> str:
    return "–" if value is None else f"{value:.2g}"


def _rate(value) -> str:
    return "–" if value is None else f"{value:.2f}×"


def render(data: dict) -> str:
    from gpudash import formatting as fmt

    devices = data["devices"]
    lines = [f"precision probe · {data['source']}"]
    for dev in devices:
        when = dev["measured_at"] or ("replayed: spec and torch only" if dev["provenance"] == "replayed" else "not run")
        lines.append(f"  [{dev['key']}] {dev['name']} ({dev['arch']}) · {when}")
    header = ["precision"]
    for dev in devices:
        header += [f"{dev['key']} spec", "torch", "verified", "max rel err", "vs fp32"]
    names = list(dict.fromkeys(p for dev in devices for p in dev["precisions"]))
    rows = []
    for name in names:
        row = [name]
        for dev in devices:
            entry = dev["precisions"].get(name)
            if entry is None:
                row += ["", "", "", "", ""]
                continue
            row += [GLYPH_SPEC.get(entry["support"], "?"), GLYPH_BOOL.get(entry["torch"], "?"),
                    GLYPH_VERDICT.get(entry["verdict"], "?"), _error(entry["max_rel_error"]),
                    _rate(entry["rate_vs_fp32"])]
        rows.append(row)
    lines += ["", fmt.table(rows, header), "", LEGEND]
    reasons = _reasons(devices)
    if reasons:
        lines += ["", *reasons]
    return "\n".join(lines)


def _reasons(devices: list[dict]) -> list[str]:
    """One line per failure, slow path or note; a reason shared by every precision of a device once."""
    out = []
    for dev in devices:
        entries = dev["precisions"]
        shared = {e["failure_reason"] for e in entries.values()}
        if len(entries) > 1 and len(shared) == 1 and None not in shared:
            out.append(f"{dev['key']} all precisions: {shared.pop()}")
            continue
        for name, entry in entries.items():
            glyph = GLYPH_VERDICT.get(entry["verdict"], "?").split()[0]
            note = entry.get("note")
            if entry["verdict"] == "slow_reference" and note:  # the note is the verdict's reason
                out.append(f"{dev['key']} {name} {glyph} {note}")
                continue
            if entry["failure_reason"]:
                out.append(f"{dev['key']} {name} {glyph} {entry['failure_reason']}")
            if note:
                out.append(f"{dev['key']} {name} note: {note}")
    return out
