"""A GPU's traffic as words: BAR1 memory, PCIe and NVLink throughput, memory-bandwidth utilization (the card's
line and the detail view's rows; gpudash.devices.nvml_throughput reads them)."""

from __future__ import annotations

from gpudash.models import Sample
from gpudash.render.formatting import NA, memory

KIB = 1024


def rate(bytes_per_s: float | None) -> str:
    """ "512 KiB/s", "12.3 MiB/s", "1.20 GiB/s"; n/a when not read."""
    if bytes_per_s is None:
        return NA
    for unit, size in (("GiB/s", KIB**3), ("MiB/s", KIB**2)):
        if bytes_per_s >= size:
            value = bytes_per_s / size
            return f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"
    return f"{bytes_per_s / KIB:.0f} KiB/s"


def tx_rx(tx: float | None, rx: float | None) -> str | None:
    """ "TX 1.20 GiB/s · RX 512 KiB/s"; None when neither was read."""
    if tx is None and rx is None:
        return None
    return f"TX {rate(tx)} · RX {rate(rx)}"


def bar1_text(sample: Sample) -> str | None:
    if sample.bar1_used_bytes is None and sample.bar1_total_bytes is None:
        return None
    return memory(sample.bar1_used_bytes, sample.bar1_total_bytes)


def traffic_line(sample: Sample) -> str:
    """The card's traffic line: only what was read ("mem bw 41% · BAR1 ... · PCIe ↑.. ↓.. · NVLink ↑.. ↓..")."""
    parts = []
    if sample.memory_utilization_pct is not None:
        parts.append(f"mem bw {sample.memory_utilization_pct:.0f}%")
    if (bar1 := bar1_text(sample)) is not None:
        parts.append(f"BAR1 {bar1}")
    for name, tx, rx in (
        ("PCIe", sample.pcie_tx_bytes_per_s, sample.pcie_rx_bytes_per_s),
        ("NVLink", sample.nvlink_tx_bytes_per_s, sample.nvlink_rx_bytes_per_s),
    ):
        if tx is not None or rx is not None:
            parts.append(f"{name} ↑{rate(tx)} ↓{rate(rx)}")
    return " · ".join(parts)
