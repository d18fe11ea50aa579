"""Per-precision benchmarks: matmul throughput over a sweep of shapes, and memory bandwidth.

`bench_machine` builds runner Tasks per device (`device_tasks`, the one place that decides what runs),
runs them in a child process with a time limit and cancel (`gpudash.measure.runner`), and assembles one
`BenchReport` per device: the seed's `PrecisionCapabilityMatrix` (best GFLOPS per precision, speedup over
fp32, theoretical peaks), the per-shape results and the bandwidth figures. A replayed machine is never
measured: its report says "not run: replayed" and shows the spec peaks, labelled with their provenance.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from gpudash.knowledge import ABSENT, arch_for, peak_memory_bandwidth_gbps, peaks_for
from gpudash.measure.runner import OK, Task, TaskResult, run_tasks
from gpudash.measure.schema import NOT_RUN, PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import MEASURED, REPLAYED, DeviceInfo
from gpudash.precisions import PRECISIONS

MODES = ("quick", "full")
NOT_RUN_REPLAYED = "not run: replayed"
BUSY_NOTE = 0.10  # other processes' CPU share above which a report warns that its figures are low

MATMUL_TASK = "gpudash.measure.bench_tasks.matmul:sweep"
BANDWIDTH_TASK = "gpudash.measure.bench_tasks.bandwidth:run"


@dataclass(frozen=True)
class Plan:
    """What one mode measures on one kind of device."""

    shapes: tuple[tuple[int, int, int], ...]  # (M, N, K)
    measure_s: float  # timing per shape, after warm-up
    copy_bytes: int
    sweep_budget_s: float | None = None  # no new shape starts after this long on one precision (quick mode)


def _squares(*sizes: int) -> tuple[tuple[int, int, int], ...]:
    return tuple((n, n, n) for n in sizes)


# The CPU quick sweep is tuned on a 2-core AVX-512 VM against benchmarks/mamf_reference.py (see
# docs/performance.md): fp32 peaks at small squares that stay in cache, bf16 is flat from 512 up, and
# int8 (VNNI) keeps rising with M at N = K = 2048, so a sweep that stopped at small shapes would
# understate it and misstate its speedup over fp32.
_CPU_QUICK = Plan(_squares(256, 512, 1024, 2048) + ((3072, 2048, 2048),), measure_s=0.2, copy_bytes=256 << 20,
                  sweep_budget_s=3.5)
_CPU_FULL = Plan(
    _squares(256, 512, 768, 1024, 1536, 2048, 3072)
    + tuple((m, 2048, 2048) for m in (512, 1024, 1536, 2560, 3072, 3584, 4096))
    + tuple((m, 1024, 1024) for m in (2048, 3072, 4096)),
    measure_s=1.0, copy_bytes=1 << 30)
# GPUs need large shapes to fill them (mamf-finder's quick run: M up to 20480 at N = K = 4096).
_GPU_QUICK = Plan(_squares(1024, 2048, 4096, 8192) + ((8192, 4096, 4096), (16384, 8192, 8192)),
                  measure_s=0.2, copy_bytes=1 << 30, sweep_budget_s=15.0)
_GPU_FULL = Plan(
    _squares(1024, 2048, 4096, 8192, 16384)
    + tuple((m, 4096, 4096) for m in range(1024, 20481, 1024))
    + tuple((m, 8192, 8192) for m in range(2048, 16385, 2048)),
    measure_s=1.0, copy_bytes=2 << 30)


def plan_for(device: DeviceInfo, mode: str) -> Plan:
    if mode not in MODES:
        raise ValueError(f"unknown bench mode {mode!r} (choose from {', '.join(MODES)})")
    cpu = device.vendor == "cpu"
    return {("quick", True): _CPU_QUICK, ("full", True): _CPU_FULL,
            ("quick", False): _GPU_QUICK, ("full", False): _GPU_FULL}[(mode, cpu)]


def torch_device(device: DeviceInfo) -> str | None:
    """The torch device string for a gpudash device, or None when torch cannot address it."""
    if device.vendor == "cpu":
        return "cpu"
    return None if device.torch_index is None else f"cuda:{device.torch_index}"


# ---------------------------------------------------------------------------------------------------
# What runs: the tasks for one device


@dataclass
class Job:
    """One runner Task and what it measures, so results can be put back on the right device."""

    device: str  # device key
    kind: str  # "matmul" | "bandwidth" (more kinds may be appended, e.g. plugin benchmarks)
    precision: str | None
    task: Task
    units: int  # progress units (cases) this task reports


def default_precisions(device: DeviceInfo) -> tuple[list[str], dict[str, str]]:
    """Precisions worth running here (native or emulated) and, for the rest, why not."""
    arch = arch_for(device)
    run, skipped = [], {}
    for p in PRECISIONS:
        if arch.precisions.get(p, ABSENT) == ABSENT:
            skipped[p] = f"not run: {p} is absent on {arch.family} (architecture tables); ask for it to try anyway"
        else:
            run.append(p)
    return run, skipped


def device_tasks(device: DeviceInfo, precisions: Iterable[str], plan: Plan, case_budget_s: float) -> list[Job]:
    """The benchmark tasks for one device: a matmul sweep per precision, then memory bandwidth."""
    where = torch_device(device)
    arch = arch_for(device)
    dtypes = {"fp8_e4m3": arch.fp8_dtype, "fp8_e5m2": arch.fp8_e5m2_dtype}
    shapes = [list(s) for s in plan.shapes]
    per_case = 2 * case_budget_s + plan.measure_s + 1.0  # a case may run to twice its budget (clocks.measure)
    jobs = []
    for p in precisions:
        kwargs = {"device": where, "precision": p, "shapes": shapes, "measure_s": plan.measure_s,
                  "case_budget_s": case_budget_s, "dtypes": dtypes, "sweep_budget_s": plan.sweep_budget_s}
        task = Task(MATMUL_TASK, kwargs, timeout_s=30.0 + per_case * len(shapes), name=f"{device.key} matmul {p}",
                    progress=True)
        jobs.append(Job(device.key, "matmul", p, task, len(shapes)))
    copy_bytes = plan.copy_bytes
    if device.memory_total_bytes:
        copy_bytes = min(copy_bytes, device.memory_total_bytes // 16)  # two buffers, room to spare
    kwargs = {"device": where, "nbytes": int(copy_bytes), "measure_s": plan.measure_s, "case_budget_s": case_budget_s}
    jobs.append(Job(device.key, "bandwidth", None,
                    Task(BANDWIDTH_TASK, kwargs, timeout_s=30.0 + 2 * per_case, name=f"{device.key} bandwidth",
                         progress=True), 2))
    return jobs


# ---------------------------------------------------------------------------------------------------
# The report


@dataclass
class BenchReport:
    device: str  # key, e.g. "cpu:0"
    index: int
    vendor: str
    name: str
    matrix: PrecisionCapabilityMatrix
    results: list[dict] = field(default_factory=list)  # one entry per measured (precision, shape)
    memory_bandwidth: list[dict] = field(default_factory=list)
    peak_provenance: dict[str, dict] = field(default_factory=dict)  # precision -> {provenance, basis}
    median_gflops_by_precision: dict[str, float] = field(default_factory=dict)
    mode: str = "quick"
    case_budget_s: float | None = None
    duration_s: float | None = None
    replayed: bool = False
    notes: list[str] = field(default_factory=list)
    torch: str | None = None

    @property
    def provenance(self) -> str:
        return self.matrix.provenance

    def to_json(self) -> dict[str, Any]:
        """The per-device object of the bench JSON contract (design.md), with gpudash's extra keys."""
        m = self.matrix
        return {
            "index": self.index, "key": self.device, "vendor": self.vendor, "name": self.name,
            "provenance": m.provenance, "replayed": self.replayed, "mode": self.mode,
            "measured_at": m.measured_at, "duration_s": self.duration_s, "case_budget_s": self.case_budget_s,
            "torch": self.torch,
            "precisions": {p: r.to_dict() for p, r in m.results.items()},
            "supported_precisions": list(m.supported_precisions),
            "unsupported_precisions": list(m.unsupported_precisions),
            "peak_gflops_by_precision": dict(m.peak_gflops_by_precision),
            "median_gflops_by_precision": dict(self.median_gflops_by_precision),
            "speedup_vs_fp32": dict(m.speedup_vs_fp32),
            "theoretical_peaks": dict(m.theoretical_peaks),
            "peak_provenance": {p: dict(v) for p, v in self.peak_provenance.items()},
            "results": [dict(r) for r in self.results],
            "memory_bandwidth": [dict(b) for b in self.memory_bandwidth],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "BenchReport":
        matrix = PrecisionCapabilityMatrix(
            hardware_name=data.get("name") or "",
            supported_precisions=list(data.get("supported_precisions") or []),
            unsupported_precisions=list(data.get("unsupported_precisions") or []),
            peak_gflops_by_precision=dict(data.get("peak_gflops_by_precision") or {}),
            speedup_vs_fp32=dict(data.get("speedup_vs_fp32") or {}),
            theoretical_peaks=dict(data.get("theoretical_peaks") or {}),
            device=data.get("key"),
            results={p: PrecisionTestResult.from_dict(r) for p, r in (data.get("precisions") or {}).items()},
            measured_at=data.get("measured_at"),
            provenance=data.get("provenance") or MEASURED,
        )
        return cls(
            device=data.get("key") or "", index=int(data.get("index") or 0), vendor=data.get("vendor") or "",
            name=data.get("name") or "", matrix=matrix, results=list(data.get("results") or []),
            memory_bandwidth=list(data.get("memory_bandwidth") or []),
            peak_provenance=dict(data.get("peak_provenance") or {}),
            median_gflops_by_precision=dict(data.get("median_gflops_by_precision") or {}),
            mode=data.get("mode") or "quick", case_budget_s=data.get("case_budget_s"),
            duration_s=data.get("duration_s"), replayed=bool(data.get("replayed")),
            notes=list(data.get("notes") or []), torch=data.get("torch"),
        )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _peaks(device: DeviceInfo, overrides: dict | None) -> dict:
    peaks = dict(peaks_for(device))
    peaks.update(overrides or {})
    return peaks


def _replayed_report(device: DeviceInfo, precisions: list[str] | None, mode: str, overrides: dict | None) -> BenchReport:
    arch = arch_for(device)
    peaks = _peaks(device, overrides)
    results = {}
    for p in precisions or PRECISIONS:
        results[p] = PrecisionTestResult(precision=p, supported=False, failure_reason=NOT_RUN_REPLAYED,
                                         spec=arch.precisions.get(p), verified=None, verdict=NOT_RUN)
    matrix = PrecisionCapabilityMatrix(
        hardware_name=device.name, theoretical_peaks={p: pk.gflops for p, pk in peaks.items()},
        device=device.key, results=results, provenance=REPLAYED)
    bandwidth = [{"op": "copy", "status": "not_run", "reason": NOT_RUN_REPLAYED}]
    spec_bw = peak_memory_bandwidth_gbps(device)
    if spec_bw is not None:
        bandwidth[0].update(peak_gbps=spec_bw.gflops, peak_provenance=spec_bw.provenance, peak_basis=spec_bw.basis)
    return BenchReport(
        device=device.key, index=device.index, vendor=device.vendor, name=device.name, matrix=matrix,
        memory_bandwidth=bandwidth, mode=mode, replayed=True,
        peak_provenance={p: {"provenance": pk.provenance, "basis": pk.basis} for p, pk in peaks.items()},
        notes=["replayed machine: nothing was measured; peaks are from the tables, labelled with their provenance"],
    )


def _shape_entry(precision: str, case: dict, peak) -> dict:
    eff = case["gflops"] / peak.gflops if peak and peak.gflops else None
    return {
        "precision": precision, "op": "matmul", "shape": case["shape"], "gflops": case["gflops"],
        "median_s": case["median_s"], "mean_s": case["mean_s"],
        "spread": {"p10_s": case["p10_s"], "p90_s": case["p90_s"], "min_s": case["min_s"]},
        "reps": case["reps"], "efficiency": eff, "budget_cut": case.get("budget_cut", False),
        "other_load": case.get("other_load"),
    }


def _precision_result(precision: str, spec: str | None, job_result: TaskResult | None, peak,
                      entries: list[dict], reason: str | None) -> PrecisionTestResult:
    """The seed's record for one precision, from its task's outcome."""
    r = PrecisionTestResult(precision=precision, supported=False, spec=spec)
    if job_result is None:
        r.failure_reason, r.verdict = reason, NOT_RUN
        return r
    if job_result.status != OK:
        r.failure_reason = f"benchmark {job_result.status}: {job_result.error}"
        return r
    value = job_result.value or {}
    cases = value.get("cases") or []
    skipped = [{"shape": c["shape"], "status": c["status"], "reason": c.get("reason")}
               for c in cases if c.get("status") != "ok"]
    r.details = {"dtypes": value.get("dtypes"), "shapes_measured": len(entries), "skipped": skipped}
    if value.get("stopped"):
        r.details["stopped"] = value["stopped"]
    if value.get("fp32_mode"):
        r.details["fp32_mode"] = value["fp32_mode"]
    if not entries:
        r.failure_reason = value.get("failure_reason") or value.get("stopped") or "no shape could be measured"
        return r
    best = max(entries, key=lambda e: e["gflops"])
    r.supported = True
    r.measured_gflops = best["gflops"]
    r.efficiency = best["efficiency"]
    r.mean_latency_ms = best["mean_s"] * 1000.0
    r.test_size = max(best["shape"])
    r.num_trials = best["reps"]
    r.details.update(best_shape=best["shape"], median_gflops=statistics.median(e["gflops"] for e in entries),
                     median_latency_ms=best["median_s"] * 1000.0)
    if peak is not None:
        r.details["peak_provenance"] = peak.provenance
    return r


def _bandwidth_entries(device: DeviceInfo, job_result: TaskResult | None) -> list[dict]:
    spec = peak_memory_bandwidth_gbps(device)
    if job_result is None:
        return []
    if job_result.status != OK:
        return [{"op": "copy", "status": job_result.status, "reason": f"benchmark {job_result.status}: {job_result.error}"}]
    out = []
    for case in (job_result.value or {}).get("cases") or []:
        entry = dict(case)
        if case.get("status") == "ok":
            entry["spread"] = {"p10_s": case["p10_s"], "p90_s": case["p90_s"], "min_s": case["min_s"]}
            entry["efficiency"] = None
            if spec is not None and case["op"] == "copy":
                entry.update(efficiency=case["gbps"] / spec.gflops, peak_gbps=spec.gflops,
                             peak_provenance=spec.provenance, peak_basis=spec.basis)
        out.append(entry)
    return out


def assemble(device: DeviceInfo, jobs: list[Job], results: list[TaskResult], precisions: list[str],
             not_run: dict[str, str], mode: str, case_budget_s: float, overrides: dict | None,
             measured_at: str, duration_s: float) -> BenchReport:
    arch = arch_for(device)
    peaks = _peaks(device, overrides)
    by_precision = {j.precision: r for j, r in zip(jobs, results) if j.kind == "matmul"}
    bandwidth = next((r for j, r in zip(jobs, results) if j.kind == "bandwidth"), None)
    shape_entries: list[dict] = []
    records: dict[str, PrecisionTestResult] = {}
    torch_version = None
    for p in [q for q in PRECISIONS if q in precisions or q in not_run]:
        job_result = by_precision.get(p)
        entries = []
        if job_result is not None and job_result.status == OK:
            torch_version = torch_version or (job_result.value or {}).get("torch")
            entries = [_shape_entry(p, c, peaks.get(p)) for c in (job_result.value or {}).get("cases") or []
                       if c.get("status") == "ok"]
        shape_entries += entries
        records[p] = _precision_result(p, arch.precisions.get(p), job_result, peaks.get(p), entries, not_run.get(p))
    best = {p: r.measured_gflops for p, r in records.items() if r.supported and r.measured_gflops}
    speedup = {p: g / best["fp32"] for p, g in best.items() if "fp32" in best and p != "fp32"}
    for p, r in records.items():
        if r.supported and "fp32" in best:
            r.speedup_vs_fp32 = 1.0 if p == "fp32" else speedup[p]
    matrix = PrecisionCapabilityMatrix(
        hardware_name=device.name,
        supported_precisions=[p for p, r in records.items() if r.supported],
        unsupported_precisions=[p for p, r in records.items() if not r.supported],
        peak_gflops_by_precision=best, speedup_vs_fp32=speedup,
        theoretical_peaks={p: pk.gflops for p, pk in peaks.items()},
        device=device.key, results=records, measured_at=measured_at, provenance=MEASURED)
    notes = []
    loaded = [e for e in shape_entries if (e.get("other_load") or 0.0) > BUSY_NOTE]
    if loaded:
        worst = max(loaded, key=lambda e: e["other_load"])
        notes.append(f"other processes took up to {worst['other_load']:.0%} of the CPU while measuring "
                     f"({len(loaded)} of {len(shape_entries)} cases; worst {worst['precision']} "
                     f"{'x'.join(map(str, worst['shape']))}): those figures are lower than this hardware can do")
    peak_info = {p: {"provenance": pk.provenance, "basis": pk.basis} for p, pk in peaks.items()}
    notes += _check_estimated_peaks(records, shape_entries, peaks, peak_info)
    return BenchReport(
        device=device.key, index=device.index, vendor=device.vendor, name=device.name, matrix=matrix,
        results=shape_entries, memory_bandwidth=_bandwidth_entries(device, bandwidth),
        peak_provenance=peak_info,
        median_gflops_by_precision={p: r.details["median_gflops"] for p, r in records.items() if r.supported},
        mode=mode, case_budget_s=case_budget_s, duration_s=round(duration_s, 2), notes=notes,
        torch=torch_version)


def _check_estimated_peaks(records: dict[str, PrecisionTestResult], entries: list[dict], peaks: dict,
                           peak_info: dict[str, dict] | None = None) -> list[str]:
    """An estimated peak below a measurement is proof the estimate is wrong (VMs report the base clock, not
    the turbo the cores run at). Then no efficiency against estimated peaks is shown: above 1 it would be
    nonsense, below 1 it would rest on the same wrong clock. `peak_info` entries get "too_low": true, so
    other figures against the same peaks (plugin benchmarks) can follow suit."""
    estimated = {p for p, pk in peaks.items() if pk.provenance != "spec"}
    if not estimated:
        return []
    beaten = [(p, r.measured_gflops, peaks[p].gflops) for p, r in records.items()
              if p in estimated and r.supported and r.measured_gflops and r.measured_gflops > peaks[p].gflops]
    if not beaten:
        return ["efficiency uses estimated peaks where no datasheet figure exists (see peak_provenance)"]
    for entry in entries:
        if entry["precision"] in estimated:
            entry["efficiency"] = None
    for p in estimated & records.keys():
        records[p].efficiency = None
    for p in estimated & (peak_info or {}).keys():
        peak_info[p]["too_low"] = True
    p, got, peak = max(beaten, key=lambda b: b[1] / b[2])
    return [f"measured {p} {got:.1f} GFLOPS exceeds the estimated peak {peak:.1f} (from the clock the OS reports, "
            "often the base clock in a VM): the estimates are too low, so efficiency is not shown for them"]


def bench_json(machine, reports: dict[str, BenchReport], mode: str, preset: str | None = None) -> dict[str, Any]:
    """The `gpudash bench --json` document (design.md); also what the history store keeps per run."""
    return {"version": 1, "replayed": machine.replayed, "source": machine.label, "mode": mode, "preset": preset,
            "devices": [r.to_json() for r in reports.values()]}


# ---------------------------------------------------------------------------------------------------
# Running


def _select(machine, devices) -> list[DeviceInfo]:
    if devices is None:
        return list(machine.devices)
    wanted = [d if isinstance(d, str) else d.key for d in devices]
    by_key = {d.key: d for d in machine.devices}
    missing = [k for k in wanted if k not in by_key]
    if missing:
        raise KeyError(f"no such device: {', '.join(missing)}")
    return [by_key[k] for k in wanted]


class _Watchdog:
    """Sets `stop` when the caller cancels or the overall time limit passes, and remembers which."""

    def __init__(self, cancel: threading.Event | None, timeout_s: float) -> None:
        self.stop = threading.Event()
        self.reason: str | None = None
        self._done = threading.Event()
        self._cancel, self._deadline, self._timeout = cancel, time.monotonic() + timeout_s, timeout_s
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while not self._done.wait(0.05):
            if self._cancel is not None and self._cancel.is_set():
                self.reason = "cancelled"
            elif time.monotonic() > self._deadline:
                self.reason = f"bench time limit of {self._timeout:g} s reached"
            else:
                continue
            self.stop.set()
            return

    def close(self) -> None:
        self._done.set()


def bench_machine(machine, devices=None, precisions: Iterable[str] | None = None, mode: str = "quick",
                  case_budget_s: float = 2.0, timeout_s: float = 600.0, cancel: threading.Event | None = None,
                  on_progress: Callable[[dict], None] | None = None, peak_overrides: dict | None = None,
                  plan: Plan | None = None) -> dict[str, BenchReport]:
    """Benchmark the machine's devices (all by default); returns device key -> BenchReport.

    precisions: names to run (default: every precision the architecture has, native or emulated).
    peak_overrides: precision -> knowledge.Peak to use instead of the tables (a calibration preset).
    plan: shapes and timing to use instead of the mode's (tests, experiments).
    on_progress(event): {"device", "precision", "shape", "done", "total"} as cases finish.
    """
    chosen = _select(machine, devices)
    wanted = list(precisions) if precisions is not None else None
    if wanted is not None:
        unknown = [p for p in wanted if p not in PRECISIONS]
        if unknown:
            raise ValueError(f"unknown precision(s): {', '.join(unknown)}")
    if machine.replayed:
        return {d.key: _replayed_report(d, wanted, mode, peak_overrides) for d in chosen}

    started, measured_at = time.monotonic(), _now()
    per_device: dict[str, tuple[list[Job], list[str], dict[str, str]]] = {}
    for device in chosen:
        if wanted is None:
            run, not_run = default_precisions(device)
        else:
            run, not_run = list(wanted), {}
        if torch_device(device) is None:
            reason = "not run: torch cannot see this device (no torch build for it, or it is hidden)"
            per_device[device.key] = ([], [], {p: reason for p in run} | not_run)
            continue
        per_device[device.key] = (device_tasks(device, run, plan or plan_for(device, mode), case_budget_s),
                                  run, not_run)
    jobs = [j for js, _, _ in per_device.values() for j in js]
    results = _run(jobs, cancel, timeout_s, on_progress)
    reports = {}
    for device in chosen:
        js, run, not_run = per_device[device.key]
        rs = [results[id(j)] for j in js]
        took = sum(r.duration_s for r in rs) if len(chosen) > 1 else time.monotonic() - started
        reports[device.key] = assemble(device, js, rs, run, not_run, mode, case_budget_s, peak_overrides,
                                       measured_at, took)
    return reports


def _run(jobs: list[Job], cancel, timeout_s: float, on_progress) -> dict[int, TaskResult]:
    if not jobs:
        return {}
    total = sum(j.units for j in jobs)
    finished = [0]

    def progress(index: int, info: dict) -> None:
        if on_progress is None:
            return
        job = jobs[index]
        done = min(int(info.get("done") or 0), job.units)
        on_progress({"device": job.device, "kind": job.kind, "precision": job.precision or info.get("op"),
                     "shape": info.get("shape"), "done": finished[0] + done, "total": total})

    def result(res: TaskResult) -> None:
        job = next(j for j in jobs if j.task is res.task)
        finished[0] += job.units
        if on_progress is not None:
            on_progress({"device": job.device, "kind": job.kind, "precision": job.precision, "shape": None,
                         "done": finished[0], "total": total, "status": res.status})

    watchdog = _Watchdog(cancel, timeout_s)
    done: dict[str, Any] = {}
    all_done = threading.Event()

    def work() -> None:
        try:
            done["out"] = run_tasks([j.task for j in jobs], cancel=watchdog.stop, on_progress=progress,
                                    on_result=result)
        except BaseException as exc:  # re-raised in the caller's thread
            done["error"] = exc
        finally:
            all_done.set()

    # The runner waits in a thread of its own, so a Ctrl-C here can still stop it: it kills the child,
    # which runs in its own session and never sees the signal. (An Event, not Thread.join: a join cut
    # short by KeyboardInterrupt can return at once the next time.)
    threading.Thread(target=work, daemon=True).start()
    try:
        while not all_done.wait(0.1):
            pass
    except KeyboardInterrupt:
        watchdog.stop.set()
        all_done.wait(10)
        raise
    finally:
        watchdog.close()
    if "error" in done:
        raise done["error"]
    out = done["out"]
    if watchdog.reason and watchdog.reason != "cancelled":
        for r in out:
            if r.status == "cancelled":
                r.status, r.error = "timeout", watchdog.reason
    return {id(j): r for j, r in zip(jobs, out)}
