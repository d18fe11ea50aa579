"""The probe JSON as text: precisions down, per device spec / torch / verified across, reasons below.

The TUI's precision view uses the same glyphs and legend.
"""

from __future__ import annotations

GLYPH_SPEC = {"native": "✓", "emulated": "⚠", "absent": "✗"}
GLYPH_BOOL = {True: "✓", False: "✗", None: "–"}
GLYPH_VERDICT = {"verified": "✓", "slow_reference": "⚠ slow", "failed": "✗", "not_run": "–"}
LEGEND = (
    "spec: ✓ native ⚠ emulated ✗ absent · torch: ✓ claims it ✗ does not – no query/not recorded · "
    "verified: ✓ correct ⚠ slow reference path ✗ failed – not run"
)


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
