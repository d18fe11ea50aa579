"""The info JSON as text: a header with the driver versions, one line per device with every reading gpustat and
nvitop show, MIG instances as rows under their GPU, the processes on the GPUs as a table of their own (as
nvitop -1 prints them), then why each n/a is n/a, and the notes.

Everything is drawn from the info JSON contract (gpudash.info.info_json), so a face that has the document
has the text. Colour comes from a Style (off for pipes); `width` is the terminal's (or COLUMNS in a pipe),
None for no limit. A device stays on one line at any width, as in gpustat: narrower than the full table, the
cells take their short forms (`536/700W`, `52.0/79.6GiB`, the name without its vendor), then whole columns
are left out in DROP_ORDER, and one line under the table names them. Sentences (the header, the n/a reasons,
health, notes) wrap at a space rather than lose their end; table rows are cut, with `…`, only where even the
last column (a process's command) does not fit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from gpudash.devices.amd_partition import partition_tag
from gpudash.plain_text import one_line
from gpudash.render.formatting import key_ranges
from gpudash.render.idle import idle_lines
from gpudash.render.info_health import health_lines
from gpudash.render.jobs import job_lines
from gpudash.render.monitor import elapsed
from gpudash.render.style import BOLD, CYAN, DIM, RED, YELLOW, Style, load_color

NA = "n/a"
GIB, MIB = 1024**3, 1024**2
Cell = tuple[str, tuple[str, ...]]  # (text, SGR codes)
BLANK: Cell = ("", ())

WIDE_HEADER = ["device", "name", "arch", "temp", "fan", "perf", "util", "enc", "dec", "power", "memory", "native"]
IDENTITY_HEADER = ["device", "name", "arch", "native"]
READINGS_HEADER = ["temp", "fan", "perf", "util", "enc", "dec", "power", "memory"]
PROCESS_HEADER = ["device", "pid", "type", "user", "gpu mem", "sm", "cpu", "host mem", "time", "command"]
COMPACT_DROPS = {"cpu", "host mem", "time"}
# Columns of the device table left out, in this order, until a device fits on one line (docs/cli.md).
DROP_ORDER = (("arch",), ("native",), ("enc", "dec"), ("fan",), ("perf",), ("power",), ("temp",))
VENDOR_WORDS = ("NVIDIA ", "AMD ", "Intel(R) ", "Intel ")
# Sample fields shown in the device rows, with the word their n/a reasons go under.
SHOWN_FIELDS = {
    "temperature_c": "temp",
    "fan_speed_pct": "fan",
    "performance_state": "perf",
    "utilization_pct": "util",
    "encoder_utilization_pct": "enc",
    "decoder_utilization_pct": "dec",
    "power_w": "power",
    "power_limit_w": "power limit",
    "memory_used_bytes": "memory",
}
PROCESS_FIELDS = {
    "type": "type",
    "user": "user",
    "memory_used_bytes": "gpu mem",
    "utilization_pct": "sm",
    "cpu_pct": "cpu",
    "host_memory_bytes": "host mem",
    "elapsed_s": "time",
    "command": "command",
}
CPU_FIELDS = {"temperature_c", "utilization_pct", "power_w", "memory_used_bytes"}  # the rest mean nothing there


def render(
    data: dict[str, Any],
    *,
    color: bool = False,
    width: int | None = None,
    show_uuid: bool = False,
    show_all: bool = False,
    processes: bool = True,
    when: float | None = None,
) -> str:
    style = Style(color)
    devices = data["devices"]
    entries = _entries([(dev, _device_cells(dev)) for dev in devices], style, show_uuid, show_all)
    table, dropped = fitted_lines(entries, style, width)
    sentences = [header_line(data, style, when)]
    rows = list(table)
    marker = [style(left_out_line(dropped, width), DIM)] if dropped else []
    processes_rows = process_lines(devices, style, width=width) if processes else []
    after = reason_lines(devices, style) + health_lines(devices, style) + mamf_lines(devices, style)
    after = (job_lines(devices, style) if processes else []) + after  # Slurm jobs, Kubernetes pods
    after += idle_lines(data, style)  # info --watch only: one reading judges nothing
    after += [f"{style('note:', YELLOW)} {one_line(note)}" for note in data.get("notes") or []]
    if width is None:
        return "\n".join(sentences + rows + processes_rows + after)
    return "\n".join(
        [w for line in sentences for w in wrap(line, width)]
        + [_cut(line, width) for line in rows]
        + [w for line in marker for w in wrap(line, width)]
        + [_cut(line, width) for line in processes_rows]
        + [w for line in after for w in wrap(line, width)]
    )


def left_out_line(dropped: Sequence[str], width: int | None) -> str:
    """The marker under a narrowed device table: which columns it left out, and how to see them."""
    return f"+ left out at {width} columns: {', '.join(dropped)} (widen, set COLUMNS, or --json)"


def header_line(data: dict[str, Any], style: Style, when: float | None = None) -> str:
    host, runtime = data["host"], data["runtime"]
    missing = data.get("runtime_unavailable") or {}
    versions = []
    for key, label in (("driver", "driver"), ("cuda_driver", "CUDA driver")):
        if runtime.get(key):
            versions.append(f"{label} {style(one_line(runtime[key], 100), BOLD)}")
        elif key in missing:
            versions.append(f"{label} {style(NA, DIM)} ({one_line(missing[key], 200)})")
    if runtime.get("torch"):
        built = [f"{name} {runtime[key]}" for key, name in (("cuda", "CUDA"), ("hip", "HIP")) if runtime.get(key)]
        versions.append(one_line(f"torch {runtime['torch']}" + (f" ({', '.join(built)})" if built else ""), 200))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
    parts = [style(one_line(host.get("hostname") or "?", 200), BOLD), stamp, f"[{one_line(data['source'], 300)}]"]
    return "  ".join(parts + (versions or ["no GPU runtime"]))


# --- devices -----------------------------------------------------------------------------------------------


def _device_cells(dev: dict[str, Any]) -> dict[str, Cell]:
    sample = dev.get("sample") or {}
    is_cpu = dev["vendor"] == "cpu"
    key: Cell = (f"[{dev['vendor']}:{dev['index']}]", (BOLD, CYAN))
    if dev.get("status") == "lost":
        return {
            "device": key,
            "name": (one_line(dev["name"], 200), (RED, BOLD)),
            "arch": BLANK,
            **dict.fromkeys(READINGS_HEADER, BLANK),
            "native": (f"GPU lost: {dev.get('status_reason') or 'unreachable'}", (RED,)),
        }

    def reading(field: str, text: str | None, *codes: str) -> Cell:
        if is_cpu and field not in CPU_FIELDS:
            return BLANK  # no such thing on a CPU: blank, not n/a
        return (text, codes) if text is not None and sample.get(field) is not None else (NA, (DIM,))

    util = sample.get("utilization_pct")
    used, total = sample.get("memory_used_bytes"), sample.get("memory_total_bytes") or dev.get("memory_total_bytes")
    mem_pct = 100 * used / total if used is not None and total else None
    temp = sample.get("temperature_c")
    return {
        "device": key,
        "name": (one_line(" ".join(p for p in (dev["name"], partition_text(dev)) if p), 200), ()),
        "arch": (arch_text(dev), ()),
        "temp": reading("temperature_c", _number(temp, "C"), *((RED,) if temp is not None and temp >= 85 else ())),
        "fan": reading("fan_speed_pct", _number(sample.get("fan_speed_pct"), "%")),
        "perf": reading("performance_state", sample.get("performance_state")),
        "util": reading("utilization_pct", _number(util, "%"), *load_color(util, 10, 75)),
        "enc": reading("encoder_utilization_pct", _number(sample.get("encoder_utilization_pct"), "%")),
        "dec": reading("decoder_utilization_pct", _number(sample.get("decoder_utilization_pct"), "%")),
        "power": _power(sample, is_cpu),
        "memory": (_memory(used, total), load_color(mem_pct, 10, 80) if used is not None else (DIM,)),
        "native": (native_text(dev["precisions"]), ()),
    }


def arch_text(dev: dict[str, Any]) -> str:
    """'Hopper 9.0', 'CDNA3 gfx942:sramecc+:xnack-', or the CPU's family and its strongest precision-relevant feature."""
    ident = dev.get("compute_capability") or dev.get("gfx_target")
    flags = dev.get("gfx_features") or {}
    if ident and flags:  # the target ID as torch prints it: gfx906:sramecc+:xnack-
        ident += "".join(f":{name}{'+' if on else '-'}" for name, on in flags.items())
    if not ident and dev["vendor"] == "cpu":
        features = dev.get("cpu_features") or []
        ident = next(
            (
                f.upper().replace("_", "-")
                for f in ("amx_bf16", "avx512_bf16", "avx512_f", "avx2", "bf16")
                if f in features
            ),
            None,
        )
    return one_line(" ".join(str(part) for part in (dev.get("arch"), ident) if part), 100)


def partition_text(dev: dict[str, Any]) -> str:
    """'CPX · NPS4' after an AMD GPU's name, as the dashboard shows it (MIG's counterpart); '' elsewhere."""
    return partition_tag(dev.get("compute_partition"), dev.get("memory_partition"))


def native_text(precisions: dict[str, dict[str, Any]]) -> str:
    """The precisions the architecture runs natively; fp8 once when both of its formats are native."""
    names = [name for name, entry in precisions.items() if entry.get("native")]
    if "fp8_e4m3" in names and "fp8_e5m2" in names:
        names[names.index("fp8_e4m3")] = "fp8"
        names.remove("fp8_e5m2")
    return " ".join(names)


def _number(value: float | None, unit: str) -> str | None:
    return None if value is None else f"{value:.0f}{unit}"


def _power(sample: dict[str, Any], is_cpu: bool) -> Cell:
    draw, limit = sample.get("power_w"), sample.get("power_limit_w")
    if draw is None and limit is None:
        return (NA, (DIM,))
    if is_cpu or limit is None:
        return (f"{draw:.0f} W", ()) if draw is not None else (NA, (DIM,))
    near = (YELLOW,) if draw is not None and draw >= 0.9 * limit else ()
    return (f"{NA if draw is None else f'{draw:.0f}'} / {limit:.0f} W", near)


def _memory(used: int | None, total: int | None) -> str:
    if used is None and total is None:
        return NA
    return f"{NA if used is None else f'{used / GIB:.1f}'} / {NA if total is None else f'{total / GIB:.1f}'} GiB"


def size(value: int | None) -> str:
    """Bytes as '512 MiB' below a GiB, else '51.5 GiB'."""
    if value is None:
        return NA
    return f"{value / MIB:.0f} MiB" if value < GIB else f"{value / GIB:.1f} GiB"


def _mig_rows(dev: dict[str, Any]) -> list[dict[str, Cell]]:
    rows = []
    for inst in (dev.get("sample") or {}).get("mig_instances") or []:
        name = one_line(inst.get("name") or NA, 200)
        ids = [f"{label} {inst[key]}" for key, label in (("gpu_instance_id", "GI"), ("compute_instance_id", "CI"))]
        sms = f"{inst['multiprocessors']} SMs" if inst.get("multiprocessors") else ""
        used, total = inst.get("memory_used_bytes"), inst.get("memory_total_bytes")
        memory = _memory(used, total)
        rows.append(
            {
                "device": (f"  └ mig{inst['index']}", (CYAN,)),
                "name": (name.rsplit(" ", 1)[-1] if " MIG " in name else name, ()),
                "arch": (" ".join(i for i in ids if not i.endswith("None")), ()),
                "memory": (memory, load_color(100 * used / total if used and total else None, 10, 80)),
                "native": (sms, (DIM,)),
                "summary": ("  ".join(part for part in (memory, sms) if part), ()),  # one line on a narrow terminal
                "uuid": (inst.get("uuid") or f"uuid {NA}", ()),
            }
        )
    return rows


def mig_label(dev: dict[str, Any], inst: dict[str, Any]) -> str:
    return f"{dev['vendor']}:{dev['index']}/mig{inst['index']}"


def _details(dev: dict[str, Any], show_uuid: bool, show_all: bool) -> str | None:
    """The -a line (nvitop's other columns) and/or the UUID, under the device's row."""
    sample = dev.get("sample") or {}
    parts = []
    if show_uuid or show_all:
        parts.append(dev.get("uuid") or f"uuid {NA}")
    if show_all and dev["vendor"] != "cpu" and dev.get("status") != "lost":
        clocks = [sample.get("sm_clock_mhz"), sample.get("memory_clock_mhz")]
        display = sample.get("display_active")
        extras = {
            "bus": dev.get("pci_bus_id"),
            "persistence": sample.get("persistence_mode"),
            "display": None if display is None else ("on" if display else "off"),
            "compute": sample.get("compute_mode"),
            "uncorrected ECC": sample.get("ecc_errors_uncorrected"),
            "MIG": sample.get("mig_mode"),
            "clocks": None if clocks[0] is None else f"{clocks[0]}/{NA if clocks[1] is None else clocks[1]} MHz",
        }
        parts += [f"{label} {NA if value is None else value}" for label, value in extras.items()]
        pending = sample.get("mig_mode_pending")
        if pending and pending != sample.get("mig_mode"):
            parts.append(f"(MIG {pending} after the next GPU reset)")
    return "  ".join(parts) if parts else None


Entry = tuple[dict[str, Cell], bool] | str  # (cells, is a MIG row) or a line of its own


def _entries(
    rows: list[tuple[dict[str, Any], dict[str, Cell]]], style: Style, uuid: bool, show_all: bool
) -> list[Entry]:
    """Each device's row, its detail line (-a, --show-uuid), then its MIG instances (and their UUIDs)."""
    indent = " " * (max((len(cells["device"][0]) for _, cells in rows), default=0) + 2)
    entries: list[Entry] = []
    for dev, cells in rows:
        entries.append((cells, False))
        detail = _details(dev, uuid, show_all)
        if detail:
            entries.append(indent + style(one_line(detail), DIM))
        for mig in _mig_rows(dev):
            entries.append((mig, True))
            if uuid or show_all:
                entries.append(indent + "  " + style(one_line(mig["uuid"][0], 200), DIM))
    return entries


def _table_lines(entries: Sequence[Entry], style: Style, header: Sequence[str]) -> list[str]:
    table = [e if isinstance(e, str) else [e[0].get(n, BLANK) for n in header] for e in entries]
    return align(table, header, style)


def _widest(lines: Sequence[str]) -> int:
    return max((_visible_len(line) for line in lines), default=0)


def fitted_lines(entries: list[Entry], style: Style, width: int | None) -> tuple[list[str], list[str]]:
    """The device table, one line a device, within `width` if it can be: the full table; else the cells'
    short forms; else without the columns of DROP_ORDER, one after another. Returns the lines and the columns
    left out. Detail lines (-a, --show-uuid) do not count: they are lines of their own."""
    rows = [e for e in entries if not isinstance(e, str)]

    def fits(header: Sequence[str], cells: list[Entry]) -> bool:
        only_rows = [c for c in cells if not isinstance(c, str)]
        return width is None or _widest(_table_lines(only_rows, style, header)) <= width

    if fits(WIDE_HEADER, list(rows)):
        return _table_lines(entries, style, WIDE_HEADER), []
    short: list[Entry] = [e if isinstance(e, str) else (short_cells(e[0]), e[1]) for e in entries]
    header, dropped = list(WIDE_HEADER), []
    for names in DROP_ORDER:
        if fits(header, short):
            break
        for name in names:
            header.remove(name)
            dropped.append(name)
    return _table_lines(short, style, header), dropped


def short_cells(cells: dict[str, Cell]) -> dict[str, Cell]:
    """A device row's cells in their short forms, meaning kept: the name without the vendor (the key says it),
    power as `536/700W`, memory as `52.0/79.6GiB`."""
    out = dict(cells)
    name, codes = cells.get("name", BLANK)
    for word in VENDOR_WORDS:
        if name.startswith(word) and len(name) > len(word):
            name = name[len(word) :]
            break
    out["name"] = (name.replace("(R)", "").replace("(TM)", ""), codes)
    for column in ("power", "memory"):
        text, codes = cells.get(column, BLANK)
        if " / " in text:
            number, unit = text.rsplit(" ", 1)
            out[column] = (number.replace(" / ", "/") + unit, codes)
    return out


def wrap(line: str, width: int, indent: str = "    ") -> list[str]:
    """A sentence in lines of at most `width` columns, broken at spaces (colour codes take no room); a word
    longer than a line (a URL) is cut with '…' rather than broken in two lines."""
    if _visible_len(line) <= width:
        return [line]
    out: list[str] = []
    current, shown = "", 0
    for word in line.split(" "):
        size = _visible_len(word)
        if current and shown + 1 + size > width:
            out.append(current)
            current, shown = indent, len(indent)
        current += ("" if shown in (0, len(indent)) and current.strip() == "" else " ") + word
        shown = _visible_len(current)
    out.append(current)
    return [piece for line in out for piece in _pieces(line, width, indent)]


def _pieces(line: str, width: int, indent: str) -> list[str]:
    """A line still too wide (one word longer than a line, a URL) broken into pieces, every character kept."""
    if _visible_len(line) <= width or "\x1b" in line:
        return [_cut(line, width)] if _visible_len(line) > width else [line]
    room = width - len(indent)
    pieces, rest = [line[:width]], line[width:]
    while rest:
        pieces.append(indent + rest[:room])
        rest = rest[room:]
    return pieces


def align(table: Sequence[list[Cell] | str], header: Sequence[str], style: Style) -> list[str]:
    """Left-aligned columns over every row that is a list of cells; a plain string is a line of its own.
    The last column is not padded, and a row may have more cells than the header (they go last)."""
    titles: list[Cell] = [(h, ()) for h in header]
    rows = [titles] + [r for r in table if not isinstance(r, str)]
    widths = [0] * max(len(r) for r in rows)
    for cells in rows:
        for i, (text, _) in enumerate(cells):
            widths[i] = max(widths[i], len(text))
    out = [_join([(h, (BOLD,)) for h in header], widths, style)]
    out += [row if isinstance(row, str) else _join(row, widths, style) for row in table]
    return out


def _join(cells: Sequence[Cell], widths: list[int], style: Style) -> str:
    parts = []
    last = max((i for i, (text, _) in enumerate(cells) if text), default=-1)
    for i, (text, codes) in enumerate(cells[: last + 1]):
        padding = "" if i == last else " " * (widths[i] - len(text))
        parts.append(style(text, *codes) + padding)
    return "  ".join(parts)


# --- processes ---------------------------------------------------------------------------------------------


COMMAND_ROOM = 40  # columns a process's command keeps before CPU%, host memory and time make way for it


def process_lines(devices: list[dict[str, Any]], style: Style, width: int | None = None) -> list[str]:
    """Every GPU process in one table (nvitop's columns), biggest GPU memory first on each device; processes
    on a MIG GPU under their MIG instance. Where `width` leaves the command less than COMMAND_ROOM columns,
    CPU%, host memory and time are left out, so the command keeps some room."""
    rows: list[list[Cell]] = []
    for dev in devices:
        if dev["vendor"] == "cpu" or dev.get("status") == "lost":
            continue
        sample = dev.get("sample") or {}
        instances = sample.get("mig_instances") or []
        groups = [(mig_label(dev, inst), inst.get("processes") or []) for inst in instances]
        if not instances:
            groups = [(f"{dev['vendor']}:{dev['index']}", sample.get("processes") or [])]
        for label, procs in groups:
            for proc in sorted(procs, key=lambda p: -(p.get("memory_used_bytes") or 0)):
                rows.append(_process_cells(label, proc))
    if not rows:
        return []
    header = PROCESS_HEADER
    command_at = len(align(rows, header, style)[0]) - len(header[-1])
    if width is not None and width - command_at < COMMAND_ROOM:
        keep = [i for i, name in enumerate(PROCESS_HEADER) if name not in COMPACT_DROPS]
        header, rows = [PROCESS_HEADER[i] for i in keep], [[row[i] for i in keep] for row in rows]
    return align(rows, header, style)  # on a terminal the command, last, is what gets cut (render)


def _process_cells(label: str, proc: dict[str, Any]) -> list[Cell]:
    def optional(value: Any, text: str | None = None) -> Cell:
        return (NA, (DIM,)) if value is None else (text if text is not None else str(value), ())

    command = proc.get("command") or proc.get("name")
    sm, cpu = proc.get("utilization_pct"), proc.get("cpu_pct")
    return [
        (label, (CYAN,)),
        (str(proc["pid"]), ()),
        optional(proc.get("type")),
        optional(proc.get("user"), one_line(proc.get("user") or "", 100)),
        optional(proc.get("memory_used_bytes"), size(proc.get("memory_used_bytes"))),
        optional(sm, _number(sm, "%")),
        optional(cpu, _number(cpu, "%")),
        optional(proc.get("host_memory_bytes"), size(proc.get("host_memory_bytes"))),
        optional(proc.get("elapsed_s"), elapsed(proc.get("elapsed_s"))),
        optional(command, one_line(command or "", 1000)),
    ]


# --- n/a reasons -------------------------------------------------------------------------------------------


def reason_lines(devices: list[dict[str, Any]], style: Style) -> list[str]:
    """One line per (reading, reason): which devices show n/a for it, and what the driver said."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for dev in devices:
        sample = dev.get("sample")
        if dev.get("status") == "lost" or sample is None:
            continue
        missing = sample.get("unavailable") or {}
        if "all" in missing:
            groups.setdefault(("readings", missing["all"]), []).append(dev)
            continue
        for field, label in SHOWN_FIELDS.items():
            if dev["vendor"] == "cpu" and field not in CPU_FIELDS:
                continue
            if sample.get(field) is None and field in missing:
                groups.setdefault((label, missing[field]), []).append(dev)
    lines = [
        f"{style(NA, DIM)}: {label} on {key_ranges(devs)}: {one_line(reason)}"
        for (label, reason), devs in groups.items()
    ]
    return lines + _process_reason_lines(devices, style)


def mamf_lines(devices: list[dict[str, Any]], style: Style) -> list[str]:
    """One line per part with published MAMF figures (the best matmul measured on it, not here), its devices."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for dev in devices:
        refs = dev.get("mamf") or {}
        if refs:
            # each figure with its setup: the conditions after the method (torch, TunableOp on AMD, power)
            figures = [
                f"{p} {ref['tflops']:,.1f} TFLOPS ({ref['conditions'].split('; ', 1)[-1]})" for p, ref in refs.items()
            ]
            accelerator = next(iter(refs.values()))["accelerator"]
            source = next(iter(refs.values()))["source"]
            groups.setdefault((accelerator, source, *figures), []).append(dev)
    return [
        f"{style('MAMF', DIM)} on {key_ranges(devs)}: best measured matmul published for {accelerator}: "
        f"{', '.join(figures)}; {source}"
        for (accelerator, source, *figures), devs in groups.items()
    ]


def _process_reason_lines(devices: list[dict[str, Any]], style: Style) -> list[str]:
    pids: dict[tuple[str, str], set[int]] = {}
    for dev in devices:
        if dev["vendor"] == "cpu" or dev.get("status") == "lost":
            continue
        for proc in (dev.get("sample") or {}).get("processes") or []:
            missing = proc.get("unavailable") or {}
            for field, label in PROCESS_FIELDS.items():
                if proc.get(field) is None and field in missing:
                    pids.setdefault((label, missing[field]), set()).add(proc["pid"])
    merged: dict[tuple[str, frozenset[int]], list[str]] = {}  # fields n/a for the same reason on the same pids
    for (label, reason), found in pids.items():
        merged.setdefault((reason, frozenset(found)), []).append(label)
    return [
        f"{style(NA, DIM)}: process {', '.join(labels)} of {_plural(len(found), 'process', 'processes')}: "
        + one_line(reason)
        for (reason, found), labels in merged.items()
    ]


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# --- fitting a terminal ------------------------------------------------------------------------------------


def _visible_len(line: str) -> int:
    return len(_strip_codes(line))


def _strip_codes(line: str) -> str:
    if "\x1b" not in line:
        return line
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def _cut(line: str, width: int) -> str:
    """A line no wider than the terminal (a wrapped line would break a redrawn screen): cut with '…'."""
    if _visible_len(line) <= width:
        return line
    if "\x1b" not in line:
        return line[: max(0, width - 1)] + "…"
    out, shown, i = [], 0, 0
    while i < len(line) and shown < width - 1:
        if line[i] == "\x1b":
            end = line.find("m", i)
            out.append(line[i : end + 1])
            i = end + 1
            continue
        out.append(line[i])
        shown += 1
        i += 1
    return "".join(out) + "\x1b[0m…"
