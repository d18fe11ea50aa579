"""The process table of the monitor: one row per process per GPU (nvitop's columns), sorted and filtered.

PID, USER, GPU, TYPE (C compute, G graphics, C+G both), GPU-MEM, SM% (the process's share of the SMs, where
the driver gives it), CPU% (of one core, like top), HOST-MEM (resident), TIME (since it started), COMMAND.
A process on two GPUs has a row on each, as nvidia-smi lists it. On a MIG GPU the GPU column says which MIG
device: "7:1" is MIG device 1 of GPU 7.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gpudash.models import PROCESS_NOT_VISIBLE
from gpudash.render import monitor
from gpudash.render.formatting import NA

if TYPE_CHECKING:
    from gpudash.models import DeviceInfo, JobAttribution, ProcessUsage, Sample


class ProcessRow(NamedTuple):
    device_key: str
    gpu: str  # the GPU label, with ":<MIG device>" on a MIG GPU
    order: tuple[int, int]  # device position, MIG device (-1: none): the GPU column's sort order
    proc: ProcessUsage

    @property
    def key(self) -> str:
        return f"{self.proc.pid}@{self.gpu}"


class Column(NamedTuple):
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


def job_text(job: JobAttribution | None) -> str:
    """ "slurm 12345.0", "k8s ns/pod", "pod 3f5a7c6e" (a pod whose name its environment does not give)."""
    if job is None:
        return ""
    if job.scheduler == "slurm":
        return f"slurm {job.job_id or '?'}" + (f".{job.step}" if job.step else "")
    if job.pod:
        return f"k8s {job.namespace + '/' if job.namespace else ''}{job.pod}"
    return f"pod {(job.pod_uid or '?')[:8]}"


JOB_COLUMN = Column("job", "JOB", False, lambda r: job_text(r.proc.job))
COLUMN_BY_ID["job"] = JOB_COLUMN


def columns_for(rows: Sequence[ProcessRow]) -> tuple[Column, ...]:
    """The columns, with JOB before COMMAND when any process belongs to a Slurm job or Kubernetes pod."""
    if not any(r.proc.job is not None for r in rows):
        return COLUMNS
    return (*COLUMNS[:-1], JOB_COLUMN, COLUMNS[-1])


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


class SortKey(NamedTuple):
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


CONTAINER_HINT = (
    "GPU pids are not in this PID namespace (a container without the host's pids): GPU memory per pid is shown; "
    "for users and commands run with --pid=host (docker) or hostPID: true (Kubernetes)"
)

CONTAINER_NOTE = "host pids not in this PID namespace: --pid=host or hostPID: true shows users and commands"


def not_here(rows: Sequence[ProcessRow]) -> set[int]:
    """The pids the host could not find (gpudash.devices.host_processes says PROCESS_NOT_VISIBLE)."""
    return {r.proc.pid for r in rows if r.proc.unavailable.get("user") == PROCESS_NOT_VISIBLE}


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
        str(x)
        for x in (p.pid, p.user, f"gpu{row.gpu}", row.gpu, p.type, p.name, p.command, job_text(p.job) or None)
        if x is not None
    ).lower()
    return all(word in haystack for word in words)


def filter_rows(rows: Sequence[ProcessRow], query: str) -> list[ProcessRow]:
    return [r for r in rows if matches(r, query)]


def cells(row: ProcessRow, columns: Sequence[Column] = COLUMNS) -> list[str]:
    return [column.text(row) for column in columns]


def reasons(row: ProcessRow) -> list[str]:
    """ "CPU%: needs a second reading" for each n/a cell of the row."""
    out = []
    for column in COLUMNS:
        field = FIELD_OF.get(column.id)
        if field and getattr(row.proc, field) is None and field in row.proc.unavailable:
            out.append(f"{column.header}: {row.proc.unavailable[field]}")
    return out


# Tree view -----------------------------------------------------------------------------------------

Ancestors = Sequence[tuple[int, "str | None"]]  # (pid, name), the parent first


class TreeEntry(NamedTuple):
    """One line of the tree view: a GPU process's row, or a parent without GPU work (row None) shown because
    it started two or more of the listed processes (torchrun, a job's launcher)."""

    row: ProcessRow | None
    pid: int
    name: str | None
    prefix: str  # "├─ ", "│  └─ ": drawn before the command

    @property
    def key(self) -> str:
        return self.row.key if self.row is not None else f"{self.pid}@tree"


def tree_entries(rows: Sequence[ProcessRow], ancestry: Mapping[int, Ancestors]) -> list[TreeEntry]:
    """`rows` (sorted) as a tree: each process under its nearest listed ancestor; processes with none that
    share a parent grouped under that parent; siblings keep the rows' order. A pid ancestry lacks (not
    visible here) is a root."""
    pids = list(dict.fromkeys(r.proc.pid for r in rows))
    listed = set(pids)
    rows_of: dict[int, list[ProcessRow]] = {}
    for r in rows:
        rows_of.setdefault(r.proc.pid, []).append(r)
    parent: dict[tuple[str, int], tuple[str, int] | None] = {}
    orphans: dict[int, list[int]] = {}  # direct parent -> listed pids with no listed ancestor
    for pid in pids:
        chain = list(ancestry.get(pid, ()))
        above = next((p for p, _ in chain if p in listed and p != pid), None)
        parent[("gpu", pid)] = ("gpu", above) if above is not None else None
        if above is None and chain:
            orphans.setdefault(chain[0][0], []).append(pid)
    names = {p: n for chain in ancestry.values() for p, n in chain}
    for ppid, children in orphans.items():
        if len(children) >= 2 and ppid not in listed:
            parent[("group", ppid)] = None
            for pid in children:
                parent[("gpu", pid)] = ("group", ppid)
    order: list[tuple[str, int]] = []  # every node, where it first appears in the rows' order
    for pid in pids:
        node = ("gpu", pid)
        group = parent[node]
        if group is not None and group[0] == "group" and group not in order:
            order.append(group)
        order.append(node)
    children_of: dict[tuple[str, int] | None, list[tuple[str, int]]] = {}
    for node in order:
        children_of.setdefault(parent[node], []).append(node)
    out: list[TreeEntry] = []

    def emit(node: tuple[str, int], lead: str, last: bool, root: bool) -> None:
        prefix = "" if root else lead + ("└─ " if last else "├─ ")
        below = "" if root else lead + ("   " if last else "│  ")  # the lead of its children and later rows
        kind, pid = node
        if kind == "group":
            out.append(TreeEntry(None, pid, names.get(pid), prefix))
        else:
            for i, row in enumerate(rows_of[pid]):  # one row per GPU it is on, the later ones indented under it
                out.append(TreeEntry(row, pid, row.proc.name, prefix if i == 0 else below))
        kids = children_of.get(node, [])
        for i, kid in enumerate(kids):
            emit(kid, below, i == len(kids) - 1, False)

    for root in children_of.get(None, []):
        emit(root, "", True, True)
    return out


def tree_cells(entry: TreeEntry, columns: Sequence[Column] = COLUMNS) -> list[str]:
    """The row's cells with the tree drawn before its command; a parent without GPU work says so."""
    if entry.row is None:
        return [str(entry.pid), *([""] * (len(columns) - 2)), f"{entry.prefix}{entry.name or NA} (no GPU)"]
    texts = cells(entry.row, columns)
    texts[-1] = entry.prefix + texts[-1]
    return texts
