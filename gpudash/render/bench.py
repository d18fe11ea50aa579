"""The bench JSON as text: a precision table per device, the memory line, reasons, notes, plugin benchmarks.

The TUI's Benchmarks view draws its tables from `precision_rows`/`HEADER` and `plugin_rows`/`PLUGIN_HEADER`
too. Saved calibration profiles (`bench --load`, `--compare`) and the preset list are drawn here as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpudash.models import NOT_RUN_REPLAYED
from gpudash.render import formatting as fmt

if TYPE_CHECKING:
    from gpudash.measure.calibration.presets import Preset
    from gpudash.measure.calibration.profile import CalibrationMetadata

DASH = "–"
HEADER = [
    "precision",
    "best GFLOPS",
    "at shape",
    "median",
    "latency ms (p10-p90)",
    "efficiency",
    "peak (provenance)",
    "% of MAMF",
    "vs fp32",
]
PLUGIN_HEADER = ["plugin benchmark", "precision", "op", "shape", "GFLOPS", "efficiency", "note"]


def number(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def ratio(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}x"


UNRELIABLE = "(unreliable)"  # marks a figure measured under contention or beyond what the hardware can do


def _speedup(value: float | None, band: Any) -> str:
    """'4.19x (4.0-4.4)': the speed over fp32 with the band its spreads allow."""
    if value is None:
        return DASH
    if isinstance(band, list) and len(band) == 2 and all(isinstance(b, (int, float)) for b in band):
        return f"{value:.2f}x ({band[0]:.2g}-{band[1]:.2g})"
    return ratio(value)


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    return f"{seconds * 1e3:.3g}"


def _shape(shape: list[int] | None) -> str:
    return "x".join(str(d) for d in shape) if shape else DASH


def _peak(dev: dict[str, Any], precision: str) -> str:
    value = dev["theoretical_peaks"].get(precision)
    if value is None:
        return DASH
    prov = (dev.get("peak_provenance") or {}).get(precision, {}).get("provenance", "")
    return f"{value:,.0f} {prov}".strip()


def _mamf(dev: dict[str, Any], precision: str, measured: bool) -> str:
    """'82% of 794,500' (this run over the best measured on the part), 'MAMF 794,500' where nothing measured."""
    ref = (dev.get("mamf") or {}).get(precision)
    if not ref:
        return DASH
    gflops = f"{ref['tflops'] * 1000:,.0f}"
    if measured and ref.get("of_mamf") is not None:
        return f"{ref['of_mamf']:.0%} of {gflops}"
    return f"MAMF {gflops}"


def mamf_lines(dev: dict[str, Any]) -> list[str]:
    """Where the MAMF figures come from: one line per part measured, each figure with its conditions."""
    by_part: dict[tuple[str, str], list[str]] = {}
    for p, ref in (dev.get("mamf") or {}).items():
        setup = ref["conditions"].split("; ", 1)[-1]  # after the method, which the line says once
        by_part.setdefault((ref["accelerator"], ref["source"]), []).append(f"{p} {ref['tflops']:,.1f} TFLOPS ({setup})")
    return [
        f"MAMF (best measured matmul, published, on {part}): {', '.join(figures)}; {MAMF_METHOD}; {source}"
        for (part, source), figures in by_part.items()
    ]


MAMF_METHOD = "mean at the best shape of ml-engineering's mamf-finder sweep"


def precision_rows(dev: dict[str, Any]) -> tuple[list[list[str]], list[str]]:
    """The rows of the precision table (HEADER) and the reasons to print below it."""
    rows, reasons = [], []
    by_precision: dict[str, list[dict[str, Any]]] = {}
    for r in dev["results"]:
        by_precision.setdefault(r["precision"], []).append(r)
    for p, entry in dev["precisions"].items():
        details = entry.get("details") or {}
        if not entry.get("supported") or entry.get("measured_gflops") is None:
            rows.append([p, DASH, DASH, DASH, DASH, DASH, _peak(dev, p), _mamf(dev, p, False), DASH])
            if entry.get("failure_reason"):
                reasons.append(f"{dev['key']} {p}: {entry['failure_reason']}")
            continue
        best_shape = details.get("best_shape")
        best = next((r for r in by_precision.get(p, []) if r["shape"] == best_shape), None)
        spread = (best or {}).get("spread") or {}
        latency = (
            DASH if best is None else f"{_ms(best['median_s'])} ({_ms(spread.get('p10_s'))}-{_ms(spread.get('p90_s'))})"
        )
        trusted = details.get("reliable") is not False
        rows.append(
            [
                p,
                number(entry["measured_gflops"]) + ("" if trusted else " " + UNRELIABLE),
                _shape(best_shape),
                number(details.get("median_gflops")),
                latency,
                DASH if entry.get("efficiency") is None else f"{entry['efficiency']:.0%}",
                _peak(dev, p),
                _mamf(dev, p, True),
                _speedup(entry.get("speedup_vs_fp32"), details.get("speedup_range")),
            ]
        )
        if not trusted:
            why = details.get("implausible_reason") or details.get("unreliable_reason") or "unreliable"
            reasons.append(f"{dev['key']} {p}: {why}")
        if details.get("stopped"):
            reasons.append(f"{dev['key']} {p}: {details['stopped']}")
    return rows, _shared_once(dev, reasons)


def _shared_once(dev: dict[str, Any], reasons: list[str]) -> list[str]:
    """A reason every precision shares ("not run: replayed") once, not once per precision."""
    texts = {r.split(": ", 1)[1] for r in reasons}
    if len(reasons) > 1 and len(reasons) == len(dev["precisions"]) and len(texts) == 1:
        return [f"{dev['key']} all precisions: {texts.pop()}"]
    return reasons


def bandwidth_line(dev: dict[str, Any]) -> str:
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


def plugin_rows(dev: dict[str, Any]) -> tuple[list[list[str]], list[str]]:
    """The plugin benchmarks of a device: table rows (PLUGIN_HEADER) of the runs that measured, and one
    line for each run that did not ("plugin/benchmark: skip: not run: replayed")."""
    rows, lines = [], []
    for run in dev.get("plugin_benchmarks") or []:
        name = f"{run['plugin']}/{run['benchmark']}"
        if run["status"] != "ok":
            lines.append(f"{name}: {run['status']}: {run.get('summary') or ''}".rstrip(": "))
            continue
        for r in run["results"]:
            eff = r.get("efficiency")
            rows.append(
                [
                    name,
                    r.get("precision") or "",
                    r.get("op") or "",
                    "x".join(map(str, r.get("shape") or [])),
                    f"{r['gflops']:.1f}" if r.get("gflops") is not None else fmt.NA,
                    f"{eff:.0%}" if eff is not None else fmt.NA,
                    (r.get("details") or {}).get("note") or "",
                ]
            )
    return rows, lines


def plugin_lines(dev: dict[str, Any]) -> list[str]:
    """The plugin benchmarks block below a device's table, or nothing when no plugin benchmark ran."""
    if not dev.get("plugin_benchmarks"):
        return []
    rows, lines = plugin_rows(dev)
    table = [fmt.table(rows, PLUGIN_HEADER)] if rows else []
    return ["plugin benchmarks:"] + table + lines


def render(data: dict[str, Any]) -> str:
    mode = f"{data['mode']} sweep" if data.get("mode") else "sweep mode not recorded"
    title = f"benchmark · {data.get('source') or ''} · {mode}"
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
        lines += reasons + mamf_lines(dev) + [f"note: {n}" for n in dev.get("notes") or []]
        lines += plugin_lines(dev)
    return "\n".join(lines)


def render_presets(presets: Iterable[Preset]) -> str:
    rows = [
        [
            p.name,
            p.hardware_name,
            p.device,
            p.platform,
            p.provenance,
            ", ".join(f"{k} {v:,.0f}" for k, v in p.theoretical_peaks.items()),
        ]
        for p in presets
    ]
    return fmt.table(rows, ["preset", "hardware", "device", "platform", "peaks are", "GFLOPS by precision"])


def render_profile(path: str, meta: CalibrationMetadata, data: dict[str, Any]) -> str:
    """A saved profile: where it came from, then its benchmark as `render` draws a run."""
    head = (
        f"profile {path}: {meta.hardware_name} · {meta.device_type} on {meta.platform_architecture} · "
        f"{meta.calibration_date or 'undated'} · torch {meta.torch_version or '?'} · gpudash {meta.gpudash_version}"
    )
    return head + "\n" + render(data)


def render_comparison(
    path_a: str, meta_a: CalibrationMetadata, path_b: str, meta_b: CalibrationMetadata, rows: list[dict[str, Any]]
) -> str:
    """Two profiles side by side: per precision, B's best GFLOPS against A's, and each one's speedup."""
    table = [
        [
            r["precision"],
            number(r["a_gflops"]),
            number(r["b_gflops"]),
            ratio(r["b_over_a"]),
            ratio(r["a_speedup_vs_fp32"]),
            ratio(r["b_speedup_vs_fp32"]),
        ]
        for r in rows
    ]
    return "\n".join(
        [
            f"A: {path_a} ({meta_a.hardware_name}, {meta_a.calibration_date or 'undated'})",
            f"B: {path_b} ({meta_b.hardware_name}, {meta_b.calibration_date or 'undated'})",
            "",
            fmt.table(table, ["precision", "A GFLOPS", "B GFLOPS", "B / A", "A vs fp32", "B vs fp32"]),
        ]
    )
