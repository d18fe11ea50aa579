"""Who else was using the hardware while a case ran (runs in the child).

A CPU matmul uses every core; when another process (or the hypervisor: steal time) takes one, the
threads wait for each other and throughput can drop many times over. A GPU shared with another job, or
one that throttles for heat or power, runs slower than the part can. A measurement taken then describes
the neighbours, not the hardware, so each timing round is tagged with what was seen during it and the
rounds that saw contention are kept out of the figures (clocks.measure_rounds).

CPU: other processes' CPU time (all busy time minus this process's own) and steal time, as shares of
wall time x CPUs, from /proc/stat (gpudash.devices.host_counters). GPU: through NVML where the child can
load it: other processes on the device, and clock-event reasons that mean the clocks were pulled down
(hardware slowdown, thermal, power brake), never the benign ones (idle, application clocks, the software
power cap a full matmul normally reaches).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from gpudash.devices import host_counters

_IDLE = ("idle", "iowait", "guest", "guest_nice", "steal")  # guest time is already counted in user time

OTHERS_LIMIT = 0.10  # a round in which other processes took more than a tenth of the CPU is contended
STEAL_LIMIT = 0.05  # ... or the hypervisor took more than 5 % of it

# NVML clock-event reasons (nvmlClocksEventReason*, formerly ClocksThrottleReason*) that slow a benchmark
# without being the part's own sustained limit: HW slowdown, SW thermal, HW thermal, HW power brake.
GPU_SLOWDOWN_REASONS = {
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "hardware power brake",
}


def _cpu_seconds() -> tuple[float, float]:
    """(busy seconds of every CPU but steal, steal seconds) since boot."""
    times = host_counters.cpu_times()
    busy = sum(v for k, v in times.items() if k not in _IDLE)
    return busy, float(times.get("steal", 0.0))


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system


@dataclass
class Seen:
    """What one round saw: shares of the machine (0-1), and the reason it counts as contended, if it does."""

    others: float | None = None
    steal: float | None = None
    reason: str | None = None
    span_s: float = 0.0  # wall time x CPUs the shares are of (a mean over rounds weighs each by it)
    over: str | None = None  # the limit it is over: "others" or "steal"


TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")  # /proc/stat and os.times() count whole clock ticks (10 ms at 100 Hz)


def judged(busy_s: float, steal_s: float, own_s: float, wall_s: float, cpus: float, own_counters: int = 1) -> Seen:
    """What a span of wall_s on `cpus` CPUs saw, from its counters' differences (busy_s: every CPU's busy time but
    steal; own_s: the measuring processes' own): the shares, and whether either is over its limit by more than
    whole clock ticks can add (one per CPU's busy counter and one per process's own counter)."""
    capacity = wall_s * cpus
    others = min(1.0, max(0.0, (busy_s - own_s) / capacity))
    stolen = min(1.0, max(0.0, steal_s / capacity))
    doubt = (cpus + own_counters) * TICK_S / capacity  # what whole ticks can add to either share
    if others - doubt > OTHERS_LIMIT:
        return Seen(others, stolen, f"other processes took {others:.0%} of the CPU", capacity, "others")
    if stolen - doubt > STEAL_LIMIT:
        return Seen(others, stolen, f"the hypervisor took {stolen:.0%} of the CPU (steal time)", capacity, "steal")
    return Seen(others, stolen, None, capacity)


def cpu_counters() -> dict[str, float]:
    """The counters a share is computed from, as a JSON-ready snapshot: subtract two (cpu_delta) to get what a
    span saw, where the shares cannot be computed on the spot (the preflight's sweeps: the ranks on one host
    are each other's "others", known only once every rank has reported)."""
    busy, steal = _cpu_seconds()
    return {"wall_s": time.monotonic(), "busy_s": busy, "steal_s": steal, "own_s": _own_seconds(),
            "cpus": float(host_counters.logical_cpus() or 1)}  # fmt: skip


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] if k != "cpus" else after[k] for k in after}


class OtherLoad:
    """Start, run the case, then `seen()` (or `share()`): other processes' CPU time / (wall time x CPUs), 0 to 1.

    Both counters move in whole clock ticks, so over a short round the share is uncertain by about (CPUs + 1)
    ticks; a round counts as contended only when the share is over its limit by more than that uncertainty (a
    round of 50 ms on 2 CPUs needs others above 40 %, one of 200 ms above 18 %)."""

    def __init__(self) -> None:
        self.cpus = host_counters.logical_cpus() or 1
        self.restart()

    def restart(self) -> None:
        self._start = cpu_counters()

    def seen(self) -> Seen:
        span = cpu_delta(self._start, cpu_counters())
        if span["wall_s"] <= 0:
            return Seen(0.0, 0.0)
        return judged(span["busy_s"], span["steal_s"], span["own_s"], span["wall_s"], self.cpus)

    def share(self) -> float:
        return self.seen().others or 0.0


class GpuWatch:
    """NVML's view of one GPU between rounds: other processes on it, and clocks pulled down.

    `restart()` at a round's start, `seen()` at its end. Built by `gpu_watch`, which returns None where NVML
    cannot be loaded or the device not found (then only the timings themselves speak)."""

    def __init__(self, nvml, handle) -> None:
        self.nvml = nvml
        self.handle = handle
        self._reasons = 0

    def restart(self) -> None:
        self._reasons = self._slowdowns()

    def _others(self) -> int:
        nvml = self.nvml
        try:
            procs = list(nvml.nvmlDeviceGetComputeRunningProcesses(self.handle))
        except Exception:
            return 0
        # Ours is one of them; in a container NVML reports host PIDs, so ours cannot be told by its PID.
        return max(0, len(procs) - 1)

    def _slowdowns(self) -> int:
        nvml = self.nvml
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            getter = getattr(nvml, name, None)
            if getter is None:
                continue
            try:
                return int(getter(self.handle))
            except Exception:
                return 0
        return 0

    def seen(self) -> Seen:
        mask = self._reasons | self._slowdowns()
        slow = [why for bit, why in GPU_SLOWDOWN_REASONS.items() if mask & bit]
        others = self._others()
        reason = None
        if others:
            reason = f"{others} other process{'es' if others > 1 else ''} ran on the GPU"
        elif slow:
            reason = f"the GPU's clocks were pulled down ({', '.join(slow)})"
        return Seen(None, None, reason)


def gpu_watch(torch, device: str) -> GpuWatch | None:
    """A GpuWatch for torch's `device` ("cuda:N"), matched to NVML by UUID, else None."""
    try:
        import importlib

        pynvml = importlib.import_module("pynvml")  # by name, as the adapters load it (optional, untyped)
        pynvml.nvmlInit()
        index = torch.device(device).index or 0
        uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or "")
        if not uuid:
            return None
        handle = pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
        return GpuWatch(pynvml, handle)
    except Exception:
        return None
