"""The device detail's field list: every field nvidia-smi, gpustat and nvitop show, each value or the reason it is
n/a, as table lines (gpudash.tui.widgets.device_detail shows them under the card).

A module of its own so the dashboard's first screen, where the detail is hidden, does not load the list, its
rows and the device card it borrows words from: the detail imports it when a device is first opened.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from gpudash.info import device_status
from gpudash.knowledge import arch_for
from gpudash.models import DeviceInfo, Runtime, Sample
from gpudash.render import formatting as fmt
from gpudash.render.na_reasons import na_reason
from gpudash.render.throughput import bar1_text, tx_rx
from gpudash.tui.widgets.device_card import missing_reason
from gpudash.tui.widgets.device_table import mig_label

GPU_ONLY = ("nvidia", "amd")
NVIDIA_ONLY = ("nvidia",)
AMD_ONLY = ("amd",)


@dataclass(frozen=True)
class FieldRow:
    label: str
    field: str  # the Sample/DeviceInfo/Runtime field whose reason explains an n/a
    value: Callable[[DeviceInfo, Sample, Runtime], object]
    vendors: tuple[str, ...] = ("nvidia", "amd", "cpu")
    source: str = "sample"  # where the reason is looked up: sample, device or runtime


FIELDS = (
    FieldRow("UUID", "uuid", lambda d, s, r: d.uuid, GPU_ONLY, "device"),
    FieldRow("PCI bus", "pci_bus_id", lambda d, s, r: d.pci_bus_id, GPU_ONLY, "device"),
    FieldRow("driver", "driver", lambda d, s, r: d.driver_version or r.driver, GPU_ONLY, "runtime"),
    FieldRow("CUDA driver", "cuda_driver", lambda d, s, r: r.cuda_driver, NVIDIA_ONLY, "runtime"),
    FieldRow("VBIOS", "vbios", lambda d, s, r: d.vbios, GPU_ONLY, "device"),
    FieldRow("architecture", "arch", lambda d, s, r: f"{arch_for(d).family} · {fmt.arch_label(d)}", source="device"),
    FieldRow("SMs / CUs / cores", "multiprocessors", lambda d, s, r: d.multiprocessors, source="device"),
    FieldRow("max clock", "max_clock_mhz", lambda d, s, r: _unit(d.max_clock_mhz, "MHz"), source="device"),
    FieldRow("memory", "memory_used_bytes", lambda d, s, r: _memory(d, s)),
    FieldRow("utilization", "utilization_pct", lambda d, s, r: _pct(s.utilization_pct)),
    FieldRow(
        "memory bandwidth busy", "memory_utilization_pct", lambda d, s, r: _pct(s.memory_utilization_pct), GPU_ONLY
    ),
    FieldRow("BAR1 memory", "bar1_used_bytes", lambda d, s, r: bar1_text(s), NVIDIA_ONLY),
    FieldRow(
        "PCIe", "pcie_tx_bytes_per_s", lambda d, s, r: tx_rx(s.pcie_tx_bytes_per_s, s.pcie_rx_bytes_per_s), NVIDIA_ONLY
    ),
    FieldRow(
        "NVLink",
        "nvlink_tx_bytes_per_s",
        lambda d, s, r: tx_rx(s.nvlink_tx_bytes_per_s, s.nvlink_rx_bytes_per_s),
        NVIDIA_ONLY,
    ),
    FieldRow("temperature", "temperature_c", lambda d, s, r: _unit(s.temperature_c, "°C")),
    FieldRow("power draw", "power_w", lambda d, s, r: _unit(s.power_w, "W", 1)),
    FieldRow("power limit", "power_limit_w", lambda d, s, r: _unit(s.power_limit_w, "W"), GPU_ONLY),
    FieldRow("fan", "fan_speed_pct", lambda d, s, r: _pct(s.fan_speed_pct), GPU_ONLY),
    FieldRow("SM clock", "sm_clock_mhz", lambda d, s, r: _unit(s.sm_clock_mhz, "MHz")),
    FieldRow("memory clock", "memory_clock_mhz", lambda d, s, r: _unit(s.memory_clock_mhz, "MHz"), GPU_ONLY),
    FieldRow("encoder", "encoder_utilization_pct", lambda d, s, r: _pct(s.encoder_utilization_pct), GPU_ONLY),
    FieldRow("decoder", "decoder_utilization_pct", lambda d, s, r: _pct(s.decoder_utilization_pct), GPU_ONLY),
    FieldRow("performance state", "performance_state", lambda d, s, r: s.performance_state, GPU_ONLY),
    FieldRow("persistence mode", "persistence_mode", lambda d, s, r: s.persistence_mode, NVIDIA_ONLY),
    FieldRow("display active", "display_active", lambda d, s, r: _yes_no(s.display_active), NVIDIA_ONLY),
    FieldRow("compute mode", "compute_mode", lambda d, s, r: s.compute_mode, NVIDIA_ONLY),
    FieldRow("ECC errors (uncorrected)", "ecc_errors_uncorrected", lambda d, s, r: s.ecc_errors_uncorrected, GPU_ONLY),
    FieldRow("MIG mode", "mig_mode", lambda d, s, r: _mig_mode(s), NVIDIA_ONLY),
    FieldRow("partition", "partition", lambda d, s, r: _partition(d), AMD_ONLY, "device"),  # AMD's MIG
    FieldRow("processes", "processes", lambda d, s, r: _count(s), GPU_ONLY),
)


def _unit(value: float | None, unit: str, digits: int = 0) -> str | None:
    return None if value is None else f"{value:.{digits}f} {unit}"


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:.0f}%"


def _yes_no(value: bool | None) -> str | None:
    return None if value is None else ("yes" if value else "no")


def _memory(device: DeviceInfo, sample: Sample) -> str | None:
    used, total = sample.memory_used_bytes, sample.memory_total_bytes or device.memory_total_bytes
    if used is None:
        return None
    share = f" ({used / total:.0%})" if total else ""
    source = f" · {sample.memory_source}" if sample.memory_source else ""  # GB10: the host's memory, said so
    return fmt.memory(used, total) + share + source


def _mig_mode(sample: Sample) -> str | None:
    if sample.mig_mode is None:
        return None
    pending = sample.mig_mode_pending
    return sample.mig_mode + (f" (after reset: {pending})" if pending and pending != sample.mig_mode else "")


def _partition(device: DeviceInfo) -> str | None:
    """'compute CPX · memory NPS4': amdsmi's two partition modes, each named, as the table's tag is not."""
    modes = [
        f"{kind} {mode}"
        for kind, mode in (("compute", device.compute_partition), ("memory", device.memory_partition))
        if mode
    ]
    return " · ".join(modes) or None


def _count(sample: Sample) -> str | None:
    if sample.processes is None:
        return None
    return str(len(sample.processes))


def field_rows(device: DeviceInfo, sample: Sample | None, runtime: Runtime) -> list[tuple[str, str, str]]:
    """(field, value, why n/a) for every field that applies to the device's vendor."""
    status, reason = device_status(device, sample)
    rows = [("status", status if reason is None else f"{status}: {reason}", "")]
    current = sample or Sample()
    for row in FIELDS:
        if device.vendor not in row.vendors:
            continue
        value = row.value(device, current, runtime)
        if value is not None:
            rows.append((row.label, str(value), ""))
            continue
        if row.source in ("runtime", "device"):  # the card's words for the same case (render/na_reasons.py)
            why = na_reason(
                row.field,
                device.sources,
                {row.field: (runtime if row.source == "runtime" else device).unavailable.get(row.field, "")},
            )
        else:
            why = missing_reason(row.field, sample, device)
        rows.append((row.label, fmt.NA, why))
    for instance in (sample.mig_instances if sample else None) or []:
        procs = "n/a" if instance.processes is None else str(len(instance.processes))
        parts = [
            fmt.memory(instance.memory_used_bytes, instance.memory_total_bytes),
            f"{instance.multiprocessors or fmt.NA} SMs",
            f"{procs} process(es)",
            f"GI {instance.gpu_instance_id} CI {instance.compute_instance_id}",
            instance.uuid or fmt.NA,
        ]
        why = " · ".join(f"{k}: {v}" for k, v in instance.unavailable.items())
        rows.append((f"└ MIG {device.index}:{instance.index} {mig_label(instance)}", " · ".join(parts), why))
    return rows


def wrapped_rows(rows: list[tuple[str, str, str]], value_w: int, why_w: int) -> list[tuple[str, list[Text]]]:
    """The field rows as table lines: a value or reason wider than its column wraps onto lines of its own
    under it (at spaces; a UUID without spaces is broken, every character kept), never cut: "not reported
    by repl…" hid which source was meant."""
    lines: list[tuple[str, list[Text]]] = []
    for label, value, why in rows:
        values = textwrap.wrap(value, value_w, break_on_hyphens=False) or [""]
        whys = textwrap.wrap(why, why_w, break_on_hyphens=False) or [""]
        for i in range(max(len(values), len(whys))):
            part = values[i] if i < len(values) else ""
            lines.append(
                (
                    label if i == 0 else f"{label}\x00{i}",  # continuation lines: keys of their own
                    [
                        Text(" " + (label if i == 0 else ""), style="bold"),
                        Text(" " + part, style="dim italic" if value == fmt.NA else ""),
                        Text(" " + (whys[i] if i < len(whys) else ""), style="dim"),
                    ],
                )
            )
    return lines
