"""The bench JSON as text: a precision table per device, the memory line, reasons and notes.

The TUI's Benchmarks view draws its table from `precision_rows` and `HEADER` too.
"""

from __future__ import annotations

from gpudash.models import NOT_RUN_REPLAYED

DASH = "–"
HEADER = [
    "precision",
    "best GFLOPS",
    "at shape",
    "median",
    "latency ms (p10-p90)",
    "efficiency",
    "peak (provenance)",
    "vs fp32",
]


def number(value, digits: int = 1) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def ratio(value) -> str:
    return DASH if value is None else f"{value:.2f}x"


def _ms(seconds) -> str:
    if seconds is None:
        return DASH
    return f"{seconds * 1e3:.3g}"


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape) if shape else DASH


def _peak(dev: dict, precision: str) -> str:
    value = dev["theoretical_peaks"].get(precision)
    if value is None:
        return DASH
    prov = (dev.get("peak_provenance") or {}).get(precision, {}).get("provenance", "")
    return f"{value:,.0f} {prov}".strip()


def precision_rows(dev: dict) -> tuple[list[list[str]], list[str]]:
    """The rows of the precision table (HEADER) and the reasons to print below it."""
    rows, reasons = [], []
    by_precision: dict[str, list[dict]] = {}
    for r in dev["results"]:
        by_precision.setdefault(r["precision"], []).append(r)
    for p, entry in dev["precisions"].items():
        details = entry.get("details") or {}
        if not entry.get("supported") or entry.get("measured_gflops") is None:
            rows.append([p, DASH, DASH, DASH, DASH, DASH, _peak(dev, p), DASH])
            if entry.get("failure_reason"):
                reasons.append(f"{dev['key']} {p}: {entry['failure_reason']}")
            continue
        best_shape = details.get("best_shape")
        best = next((r for r in by_precision.get(p, []) if r["shape"] == best_shape), None)
        spread = (best or {}).get("spread") or {}
        latency = (
            DASH if best is None else f"{_ms(best['median_s'])} ({_ms(spread.get('p10_s'))}-{_ms(spread.get('p90_s'))})"
        )
        rows.append(
            [
                p,
                number(entry["measured_gflops"]),
                _shape(best_shape),
                number(details.get("median_gflops")),
                latency,
                DASH if entry.get("efficiency") is None else f"{entry['efficiency']:.0%}",
                _peak(dev, p),
                ratio(entry.get("speedup_vs_fp32")),
            ]
        )
        if details.get("stopped"):
            reasons.append(f"{dev['key']} {p}: {details['stopped']}")
    return rows, _shared_once(dev, reasons)


def _shared_once(dev: dict, reasons: list[str]) -> list[str]:
    """A reason every precision shares ("not run: replayed") once, not once per precision."""
    texts = {r.split(": ", 1)[1] for r in reasons}
    if len(reasons) > 1 and len(reasons) == len(dev["precisions"]) and len(texts) == 1:
        return [f"{dev['key']} all precisions: {texts.pop()}"]
    return reasons


def bandwidth_line(dev: dict) -> str:
    parts = []
    for b in dev.get("memory_bandwidth") or []:
        label = {"copy": "on-device copy", "host_to_device": "host to device"}.get(b.get("op"), b.get("op"))
        if b.get("status") == "ok":
            eff = (
                f", {b['efficiency']:.0%} of {b['peak_gbps']:,.0f} GB/s {b.get('peak_provenance', '')}"
                if b.get("efficiency") is not None
                else ""
            )
            parts.append(f"{label} {b['gbps']:,.1f} GB/s ({b['bytes'] >> 20} MiB{eff})")
        else:
            peak = f"; spec {b['peak_gbps']:,.0f} GB/s" if b.get("peak_gbps") else ""
            parts.append(f"{label}: {b.get('reason') or b.get('status')}{peak}")
    return "memory: " + " · ".join(parts) if parts else "memory: not measured"


def render(data: dict) -> str:
    from gpudash import formatting as fmt
    from gpudash.cli.bench_plugins import render as render_plugins

    title = f"benchmark · {data.get('source') or ''} · {data.get('mode') or 'quick'} sweep"
    if data.get("preset"):
        title += f" · preset {data['preset']}"
    lines = [title]
    for dev in data["devices"]:
        when = dev.get("measured_at") or (NOT_RUN_REPLAYED if dev.get("replayed") else "not run")
        took = f" · {dev['duration_s']:.1f} s" if dev.get("duration_s") else ""
        torch_v = f" · torch {dev['torch']}" if dev.get("torch") else ""
        lines += ["", f"[{dev['key']}] {dev['name']} · {when}{took}{torch_v}"]
        rows, reasons = precision_rows(dev)
        lines += [fmt.table(rows, HEADER), bandwidth_line(dev)]
        lines += reasons + [f"note: {n}" for n in dev.get("notes") or []]
        lines += render_plugins(dev)
    return "\n".join(lines)


def render_presets() -> str:
    from gpudash import formatting as fmt
    from gpudash.measure.calibration.presets import PRESETS

    rows = [
        [
            p.name,
            p.hardware_name,
            p.device,
            p.platform,
            p.provenance,
            ", ".join(f"{k} {v:,.0f}" for k, v in p.theoretical_peaks.items()),
        ]
        for p in PRESETS.values()
    ]
    return fmt.table(rows, ["preset", "hardware", "device", "platform", "peaks are", "GFLOPS by precision"])
