"""The probe JSON as text: precisions down, per device spec / torch / verified across, reasons below.

The TUI's Precision view uses the same glyphs and legend; the CLI prints `progress_line` on stderr.
"""

from __future__ import annotations

from typing import Any

from gpudash.render import formatting as fmt

GLYPH_SPEC = {"native": "✓", "emulated": "⚠", "absent": "✗"}
GLYPH_BOOL = {True: "✓", False: "✗", None: "–"}
GLYPH_VERDICT = {"verified": "✓", "slow_reference": "⚠ slow", "failed": "✗", "not_run": "–"}
LEGEND = (
    "spec: ✓ native ⚠ emulated ✗ absent · torch: ✓ claims it ✗ does not – no query/not recorded · "
    "verified: ✓ correct ⚠ slow reference path ✗ failed – not run"
)


def _error(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def render(data: dict[str, Any]) -> str:
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
            row += [
                GLYPH_SPEC.get(entry["support"], "?"),
                GLYPH_BOOL.get(entry["torch"], "?"),
                GLYPH_VERDICT.get(entry["verdict"], "?"),
                _error(entry["max_rel_error"]),
                _rate(entry["rate_vs_fp32"]),
            ]
        rows.append(row)
    lines += ["", fmt.table(rows, header), "", LEGEND]
    reasons = _reasons(devices)
    if reasons:
        lines += ["", *reasons]
    return "\n".join(lines)


def _reasons(devices: list[dict[str, Any]]) -> list[str]:
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


def progress_line(event: dict[str, Any]) -> str | None:
    """'[3/9] cpu:0 bf16: verified (0.4 s)' for a finished precision; None for the events not worth a line."""
    if event["event"] != "done" or event.get("reason") == "not run: cancelled":
        return None
    reason = f": {event['reason']}" if event.get("reason") and event["verdict"] == "failed" else ""
    return (
        f"[{event['done']}/{event['total']}] {event['device']} {event['precision']}: "
        f"{event['verdict']} ({event['seconds']:.1f} s){reason}"
    )
