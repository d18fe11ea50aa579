"""The process table of the monitor: one row per process per GPU (nvitop's columns), sorted and filtered.

PID, USER, GPU, TYPE (C compute, G graphics, C+G both), GPU-MEM, SM% (the process's share of the SMs, where
the driver gives it), CPU% (of one core, like top), HOST-MEM (resident), TIME (since it started), COMMAND.
A process on two GPUs has a row on each, as nvidia-smi lists it. On a MIG GPU the GPU column says which MIG
device: "7:1" is MIG device 1 of GPU 7.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudash.render import monitor
from gpudash.render.formatting import NA

if TYPE_CHECKING:
    from gpudash.models import DeviceInfo, ProcessUsage, Sample


@dataclass(frozen=True)
class ProcessRow:
    device_key: str
    gpu: str  # the GPU label, with ":<MIG device>" on a MIG GPU
    order: tuple[int, int]  # device position, MIG device (-1: none): the GPU column's sort order
    proc: ProcessUsage

    @property
    def key(self) -> str:
        return f"{self.proc.pid}@{self.gpu}"


@dataclass(frozen=True)
class Column:
    id: str
    header: str
    right: bool  # numbers are right-aligned
    text: Callable[[ProcessRow], str]


def _number(value: float | None, digits: int = 0) -> str:
    return NA if value is None else f"{value:.{digits}f}"


COLUMNS = (
    Column("pid", "PID", True, lambda r: str(r.proc.pid)),
    Column("user", "USER", False, lambda r: r.proc.user or NA),
    Column("gpu", "GPU", False, lambda r: r.gpu),
    Column("type", "TYPE", False, lambda r: r.proc.type or NA),
    Column("gpu_mem", "GPU-MEM", True, lambda r: monitor.size(r.proc.memory_used_bytes)),
    Column("sm", "SM%", True, lambda r: _number(r.proc.utilization_pct)),
    Column("cpu", "CPU%", True, lambda r: _number(r.proc.cpu_pct, 1)),
    Column("host_mem", "HOST-MEM", True, lambda r: monitor.size(r.proc.host_memory_bytes)),
    Column("time", "TIME", True, lambda r: monitor.elapsed(r.proc.elapsed_s)),
    Column("command", "COMMAND", False, lambda r: r.proc.command or r.proc.name or NA),
)
COLUMN_BY_ID = {c.id: c for c in COLUMNS}
# The ProcessUsage field behind each column, for its n/a reason.
FIELD_OF = {
    "user": "user",
    "type": "type",
    "gpu_mem": "memory_used_bytes",
    "sm": "utilization_pct",
    "cpu": "cpu_pct",
    "host_mem": "host_memory_bytes",
    "time": "elapsed_s",
    "command": "command",
}


@dataclass(frozen=True)
class SortKey:
    id: str  # a column id
    value: Callable[[ProcessRow], Any]
    descending: bool  # the natural order: biggest first for figures, A-Z for names


SORT_KEYS = (
    SortKey("gpu_mem", lambda r: r.proc.memory_used_bytes, True),
    SortKey("sm", lambda r: r.proc.utilization_pct, True),
    SortKey("cpu", lambda r: r.proc.cpu_pct, True),
    SortKey("host_mem", lambda r: r.proc.host_memory_bytes, True),
    SortKey("time", lambda r: r.proc.elapsed_s, True),
    SortKey("pid", lambda r: r.proc.pid, False),
    SortKey("user", lambda r: (r.proc.user or "").lower() or None, False),
    SortKey("gpu", lambda r: r.order, False),
    SortKey("type", lambda r: r.proc.type, False),
    SortKey("command", lambda r: (r.proc.command or r.proc.name or "").lower() or None, False),
)
SORT_BY_ID = {s.id: s for s in SORT_KEYS}
DEFAULT_SORT = "gpu_mem"


def process_rows(
    devices: Sequence[DeviceInfo], samples: Mapping[str, Sample], labels: Mapping[str, str]
) -> tuple[list[ProcessRow], dict[str, str]]:
    """Every listed process, and {GPU label: reason} for the GPUs whose process list is n/a."""
    rows: list[ProcessRow] = []
    missing: dict[str, str] = {}
    for position, device in enumerate(devices):
        sample = samples.get(device.key)
        if device.vendor == "cpu" or sample is None:
            continue
        label = labels.get(device.key, str(device.index))
        if sample.processes is None:
            missing[label] = (
                sample.unavailable.get("processes") or sample.unavailable.get("all") or "not reported by the driver"
            )
            continue
        for proc in sample.processes:
            mig = _mig_device(sample, proc)
            gpu = label if mig is None else f"{label}:{mig}"
            rows.append(ProcessRow(device.key, gpu, (position, -1 if mig is None else mig), proc))
    return rows, missing


def _mig_device(sample: Sample, proc: ProcessUsage) -> int | None:
    if proc.gpu_instance_id is None or not sample.mig_instances:
        return None
    for instance in sample.mig_instances:
        if instance.gpu_instance_id == proc.gpu_instance_id and (
            proc.compute_instance_id is None
            or instance.compute_instance_id is None
            or instance.compute_instance_id == proc.compute_instance_id
        ):
            return instance.index
    return None


def sort_rows(rows: Sequence[ProcessRow], sort_id: str, reverse: bool = False) -> list[ProcessRow]:
    """Rows by the sort key in its natural order (flipped by `reverse`); n/a values always last; ties by
    GPU then pid, so the order is stable from one reading to the next."""
    key = SORT_BY_ID.get(sort_id, SORT_BY_ID[DEFAULT_SORT])
    descending = key.descending != reverse
    known = [r for r in rows if key.value(r) is not None]
    unknown = [r for r in rows if key.value(r) is None]
    tie = sorted(known, key=lambda r: (r.order, r.proc.pid))
    ordered = sorted(tie, key=key.value, reverse=descending)
    return ordered + sorted(unknown, key=lambda r: (r.order, r.proc.pid))


def matches(row: ProcessRow, query: str) -> bool:
    """Every word of the query (any case) appears in the row's pid, user, GPU, type, name or command."""
    words = query.lower().split()
    if not words:
        return True
    p = row.proc
    haystack = " ".join(
        str(x) for x in (p.pid, p.user, f"gpu{row.gpu}", row.gpu, p.type, p.name, p.command) if x is not None
    ).lower()
    return all(word in haystack for word in words)


def filter_rows(rows: Sequence[ProcessRow], query: str) -> list[ProcessRow]:
    return [r for r in rows if matches(r, query)]


def cells(row: ProcessRow) -> list[str]:
    return [column.text(row) for column in COLUMNS]


def reasons(row: ProcessRow) -> list[str]:
    """ "CPU%: needs a second reading" for each n/a cell of the row."""
    out = []
    for column in COLUMNS:
        field = FIELD_OF.get(column.id)
        if field and getattr(row.proc, field) is None and field in row.proc.unavailable:
            out.append(f"{column.header}: {row.proc.unavailable[field]}")
    return out
