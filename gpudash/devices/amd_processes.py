"""Processes on an AMD GPU from amdsmi, in both shapes its Python API has had.

The amdsmi installed here (7.0) returns one dict per process from amdsmi_get_gpu_process_list; older
releases returned process handles to pass to amdsmi_get_gpu_process_info, which returned the dict. Each
dict carries `engine_usage` {gfx, enc}: the time the process has spent on those engines, in ns
(AMD SMI reference, amdsmi_proc_info_t:
https://rocm.docs.amd.com/projects/amdsmi/en/latest/doxygen/docBin/html/structamdsmi__proc__info__t.html),
so a busy share needs two readings, like CPU% (and, like CPU%, can pass 100 when several engines work).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gpudash.devices.fields import error_reason, read_field
from gpudash.devices.host_processes import CPU_FIRST_READING, HostProcesses
from gpudash.models import ProcessUsage

NO_TYPE = "amdsmi does not tell compute from graphics"
NOT_REPORTED = "not reported by amdsmi"
_ENGINES = (("utilization_pct", "gfx"), ("encoder_utilization_pct", "enc"))


class AmdProcesses:
    def __init__(self, smi: Any, host: HostProcesses | None = None, clock: Callable[[], float] = time.monotonic):
        self.smi = smi
        self.host = host or HostProcesses()
        self._clock = clock
        self._engine_ns: dict[tuple[int, int], tuple[float, dict[str, int]]] = {}  # (gpu, pid) -> (at, ns)

    def read(self, handle: Any, index: int, missing: dict[str, str]) -> list[ProcessUsage] | None:
        listed = read_field(missing, "processes", lambda: self.smi.amdsmi_get_gpu_process_list(handle))
        if listed is None:
            return None
        now = self._clock()
        out = []
        unreadable: list[str] = []
        for entry in listed:
            info = entry if isinstance(entry, dict) else self._details(handle, entry, unreadable)
            if info is None or not isinstance(info.get("pid"), int):
                continue
            proc = self._process(info)
            self._engine_shares(index, proc, info.get("engine_usage"), now)
            self.host.fill(proc)
            out.append(proc)
        if unreadable:
            missing["process_details"] = f"{len(unreadable)} process(es) unreadable: {unreadable[0]}"
        seen = {p.pid for p in out}
        for key in [k for k in self._engine_ns if k[0] == index and k[1] not in seen]:
            del self._engine_ns[key]  # exited processes: the table stays as small as the process list
        return out

    def _details(self, handle: Any, process: Any, unreadable: list[str]) -> dict | None:
        info_of = getattr(self.smi, "amdsmi_get_gpu_process_info", None)
        if info_of is None:
            unreadable.append("amdsmi_get_gpu_process_info missing")
            return None
        try:
            return info_of(handle, process)
        except Exception as exc:  # the process exited, or amdsmi refused
            unreadable.append(error_reason(exc))
            return None

    @staticmethod
    def _process(info: dict) -> ProcessUsage:
        name = info.get("name")
        vram = (info.get("memory_usage") or {}).get("vram_mem")
        proc = ProcessUsage(
            pid=info["pid"],
            name=name if isinstance(name, str) and name not in ("", "N/A") else None,
            memory_used_bytes=vram if isinstance(vram, int) else None,
        )
        proc.unavailable["type"] = NO_TYPE
        for name in ("memory_utilization_pct", "decoder_utilization_pct"):
            proc.unavailable[name] = NOT_REPORTED
        if proc.memory_used_bytes is None:
            proc.unavailable["memory_used_bytes"] = NOT_REPORTED
        return proc

    def _engine_shares(self, index: int, proc: ProcessUsage, usage: Any, now: float) -> None:
        counters = {
            engine: value
            for engine, value in (usage or {}).items()
            if isinstance(value, int) and not isinstance(value, bool)
        }
        before = self._engine_ns.get((index, proc.pid))
        self._engine_ns[(index, proc.pid)] = (now, counters)
        for name, engine in _ENGINES:
            if engine not in counters:
                proc.unavailable[name] = NOT_REPORTED
            elif before is None or engine not in before[1] or now <= before[0]:
                proc.unavailable[name] = CPU_FIRST_READING
            elif counters[engine] < before[1][engine]:  # a counter reset: no honest share this time
                proc.unavailable[name] = "engine counter went back"
            else:
                share = (counters[engine] - before[1][engine]) / ((now - before[0]) * 1e9) * 100
                setattr(proc, name, round(share, 1))
