"""One card per device: what it is, how busy it is, which precisions it has, and recent history.

Missing readings show "n/a"; the reason is spelled out in a dim line at the bottom of the card (so it
can be found without a mouse) and is the tooltip of the gauge or readings it belongs to.

The card is redrawn every second for every visible device, so it keeps few widgets and only updates
the ones whose text changed: each widget repaint costs real CPU at idle.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Static

from gpudash.info import precision_support
from gpudash.knowledge import arch_for
from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render import formatting as fmt
from gpudash.render.na_reasons import WAITING, na_reason
from gpudash.render.throughput import traffic_line
from gpudash.tui.widgets.chart_lines import LINES
from gpudash.tui.widgets.gauge import Gauge
from gpudash.tui.widgets.precision_badges import PrecisionBadges

# The gauges use the chart's colours, so a line can be matched to its gauge at a glance.
MEMORY_COLOUR, UTIL_COLOUR = LINES["memory_pct"][1], LINES["utilization_pct"][1]

# (Sample field, label) in display order, two to a line; memory clock only means something on a GPU.
READINGS = (
    ("temperature_c", "temp"),
    ("power_w", "power"),
    ("sm_clock_mhz", "clock"),
    ("memory_clock_mhz", "mem clock"),
)
READING_WIDTH = 24  # columns per reading, so the second column lines up


def card_id(device: DeviceInfo) -> str:
    return "card-" + device.key.replace(":", "-")


def missing_reason(name: str, sample: Sample | None, device: DeviceInfo) -> str:
    """Why `name` is n/a, in the words every face uses (gpudash.render.na_reasons)."""
    if sample is None:
        return WAITING
    return na_reason(name, device.sources, sample.unavailable, {name: device.unavailable.get(name, "")})


def reading_text(name: str, sample: Sample) -> str:
    value = getattr(sample, name)
    if name == "power_w" and value is not None and sample.power_limit_w:
        return f"{value:.0f} / {sample.power_limit_w:.0f} W"
    unit = {"temperature_c": "°C", "power_w": "W"}.get(name, "MHz")
    return fmt.number(value, unit)


def versions_text(device: DeviceInfo, runtime: Runtime, torch_state: str) -> str:
    parts = []
    if device.vendor != "cpu":
        parts.append(f"driver {device.driver_version or runtime.driver or fmt.NA}")
        name, version = ("HIP", runtime.hip) if device.vendor == "amd" else ("CUDA", runtime.cuda)
        parts.append(f"{name} {version or fmt.NA}")
    torch = {"loading": "loading…", "failed": fmt.NA}.get(torch_state) or runtime.torch or fmt.NA
    parts.append(f"torch {torch}")
    return " · ".join(parts)


def identity_text(device: DeviceInfo) -> str:
    parts = [device.vendor, arch_for(device).family, fmt.arch_label(device)]
    if device.vendor == "cpu":
        parts.append(f"{device.multiprocessors or fmt.NA} cores / {device.logical_cores or fmt.NA} threads")
    elif device.multiprocessors:
        parts.append(f"{device.multiprocessors} {'CUs' if device.vendor == 'amd' else 'SMs'}")
    return " · ".join(parts)


def processes_text(sample: Sample | None, device: DeviceInfo, missing: dict[str, str]) -> Content:
    """Who is using the GPU, biggest first (nvitop's and gpustat's first question). Not for the CPU."""
    if device.vendor == "cpu" or sample is None:
        return Content("")
    if sample.processes is None:
        missing["procs"] = missing_reason("processes", sample, device)
        return Content.assemble(("procs", "$text-muted"), " n/a")
    listed = fmt.processes(sample.processes) or "none"
    return Content.assemble(("procs", "$text-muted"), f" {listed}")


class DeviceCard(Vertical):
    def __init__(self, device: DeviceInfo, *, interval_s: float, window_s: float) -> None:
        super().__init__(id=card_id(device), classes="device-card")
        self.device = device
        from gpudash.tui.widgets.history_chart import HistoryChart  # plotext: only once a card is opened

        self.chart = HistoryChart(interval_s, window_s)
        self.sample: Sample | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(classes="card-body"):
            with Vertical(classes="card-facts"):
                yield Static(classes="identity", markup=False)  # a device's name as its driver gives it
                yield Static(classes="versions", markup=False)
                yield Gauge("mem", colour=MEMORY_COLOUR, warn_at=0.9, error_at=0.97, id="memory")
                yield Gauge("util", colour=UTIL_COLOUR, id="util")
                yield Line(classes="readings")
                yield Line(classes="traffic")  # memory bandwidth, BAR1, PCIe, NVLink: what the driver read
                yield Line(classes="processes")
                yield PrecisionBadges()
                yield Line(classes="na-reasons")
            yield self.chart

    def on_mount(self) -> None:
        self.show_sample(None)

    def describe(self, device: DeviceInfo, runtime: Runtime, torch_state: str, source: str) -> None:
        """Static facts; called again when torch's view has been merged in."""
        self.device = device
        kind = "CPU" if device.vendor == "cpu" else "GPU"
        self.border_title = Content(f"{kind} {device.index} · {device.name}")  # never markup: "[/]" would raise
        self.border_subtitle = Content(source)
        self.query_one(".identity", Static).update(identity_text(device))
        self.query_one(".versions", Static).update(versions_text(device, runtime, torch_state))
        notes = "\n".join(arch_for(device).notes)
        self.query_one(PrecisionBadges).set_support(precision_support(device), notes)

    def show_sample(self, sample: Sample | None, series: dict[str, list[float | None]] | None = None) -> None:
        self.sample = sample
        dev = self.device
        missing: dict[str, str] = {}  # label -> why it is n/a
        used = sample.memory_used_bytes if sample else None
        total = (sample.memory_total_bytes if sample else None) or dev.memory_total_bytes
        if used is None:
            missing["memory"] = missing_reason("memory_used_bytes", sample, dev)
        fraction = used / total if used is not None and total else None
        text = fmt.memory(used, total) + (f" ({fraction:.0%})" if fraction is not None else "")
        if sample is not None and sample.memory_source:  # GB10: the host's memory, said so
            text += f" {sample.memory_source}"
        self.query_one("#memory", Gauge).show(fraction, text, missing.get("memory"))
        util = sample.utilization_pct if sample else None
        if util is None:
            missing["util"] = missing_reason("utilization_pct", sample, dev)
        self.query_one("#util", Gauge).show(None if util is None else util / 100, fmt.pct(util), missing.get("util"))
        cells: list[Content] = []
        for name, label in READINGS:
            if name == "memory_clock_mhz" and dev.vendor == "cpu":
                continue
            value = reading_text(name, sample) if sample else "…"
            reason = None if sample and getattr(sample, name) is not None else missing_reason(name, sample, dev)
            cell = Content.assemble((label, "$text-muted"), " ", (value, "$text-muted italic" if reason else ""))
            cells.append(cell.pad_right(max(1, READING_WIDTH - cell.cell_length)) if len(cells) % 2 == 0 else cell)
            if reason and sample:
                missing[label] = reason
        readings = self.query_one(".readings", Line)
        readings.set(Content("\n").join(Content("").join(cells[i : i + 2]) for i in range(0, len(cells), 2)))
        tooltip = "\n".join(f"{label}: {why}" for label, why in missing.items() if label not in ("memory", "util"))
        if readings.tooltip != (tooltip or None):
            readings.tooltip = tooltip or None
        self.query_one(".traffic", Line).set(Content(traffic_line(sample) if sample else ""))
        self.query_one(".processes", Line).set(processes_text(sample, dev, missing))
        for name, why in dev.unavailable.items():  # static facts the adapters could not read
            missing.setdefault(name.replace("_", " "), why)
        reasons = " · ".join(f"{label}: {why}" for label, why in missing.items())
        line = f"{WAITING}…" if sample is None else f"n/a — {reasons}" if reasons else ""
        self.query_one(".na-reasons", Line).set(Content(line))
        if series is not None:
            self.chart.show_series(series)


class Line(Static):
    """A fixed-size Static updated only when its text changed: no relayout, no repaint otherwise."""

    def __init__(self, *, classes: str) -> None:
        super().__init__(classes=classes)
        self.shown: Content | None = None

    def set(self, content: Content) -> None:
        if self.shown != content:
            self.shown = content
            self.update(content, layout=False)
