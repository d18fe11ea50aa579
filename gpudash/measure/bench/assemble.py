"""A device's BenchReport from its tasks' outcomes: the PrecisionCapabilityMatrix (best GFLOPS per
precision, speedup over fp32, theoretical peaks), the per-shape results, the bandwidth and the notes."""

from __future__ import annotations

from gpudash.knowledge import arch_for
from gpudash.measure.bench.entries import bandwidth_entries, precision_result, shape_entry
from gpudash.measure.bench.jobs import Job
from gpudash.measure.bench.peaks import bench_peaks, check_estimated_peaks, peak_provenance, preset_notes
from gpudash.measure.bench.plausibility import mark_implausible
from gpudash.measure.bench.report import BenchReport
from gpudash.measure.runner import OK, TaskResult
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import MEASURED, DeviceInfo
from gpudash.precisions import PRECISIONS

BUSY_NOTE = 0.10  # other processes' CPU share above which a report warns that its figures are low


def assemble(
    device: DeviceInfo,
    jobs: list[Job],
    results: list[TaskResult],
    precisions: list[str],
    not_run: dict[str, str],
    mode: str,
    case_budget_s: float,
    overrides: dict | None,
    measured_at: str,
    duration_s: float,
) -> BenchReport:
    arch = arch_for(device)
    peaks = bench_peaks(device, overrides)
    by_precision = _per_precision(jobs, results)
    bandwidth = next((r for j, r in zip(jobs, results) if j.kind == "bandwidth"), None)
    shape_entries: list[dict] = []
    records: dict[str, PrecisionTestResult] = {}
    torch_version = None
    for p in [q for q in PRECISIONS if q in precisions or q in not_run]:
        job_result = by_precision.get(p)
        entries = []
        if job_result is not None and job_result.status == OK:
            torch_version = torch_version or (job_result.value or {}).get("torch")
            entries = [
                shape_entry(p, c, peaks.get(p))
                for c in (job_result.value or {}).get("cases") or []
                if c.get("status") == "ok"
            ]
        shape_entries += entries
        records[p] = precision_result(p, arch.precisions.get(p), job_result, peaks.get(p), entries, not_run.get(p))
    best = {p: r.measured_gflops for p, r in records.items() if r.supported and r.measured_gflops}
    speedup = {p: g / best["fp32"] for p, g in best.items() if "fp32" in best and p != "fp32"}
    for p, r in records.items():
        if r.supported and "fp32" in best:
            r.speedup_vs_fp32 = 1.0 if p == "fp32" else speedup[p]
            if p != "fp32":
                r.details["speedup_range"] = _speedup_range(r, records["fp32"])
    mark_implausible(device, records)  # the reasons stay in each record's details; the text shows them there
    matrix = PrecisionCapabilityMatrix(
        hardware_name=device.name,
        supported_precisions=[p for p, r in records.items() if r.supported],
        unsupported_precisions=[p for p, r in records.items() if not r.supported],
        peak_gflops_by_precision=best,
        speedup_vs_fp32=speedup,
        theoretical_peaks={p: pk.gflops for p, pk in peaks.items()},
        device=device.key,
        results=records,
        measured_at=measured_at,
        provenance=MEASURED,
    )
    peak_info = peak_provenance(peaks)
    notes = _busy_note(shape_entries) + check_estimated_peaks(
        records, shape_entries, peaks, peak_info, keep=set(overrides or ())
    )
    notes += preset_notes(records, overrides)
    return BenchReport(
        device=device.key,
        index=device.index,
        vendor=device.vendor,
        name=device.name,
        matrix=matrix,
        results=shape_entries,
        memory_bandwidth=bandwidth_entries(device, bandwidth),
        peak_provenance=peak_info,
        median_gflops_by_precision={p: r.details["median_gflops"] for p, r in records.items() if r.supported},
        mode=mode,
        case_budget_s=case_budget_s,
        duration_s=round(duration_s, 2),
        notes=notes,
        torch=torch_version,
    )


def _per_precision(jobs: list[Job], results: list[TaskResult]) -> dict[str | None, TaskResult]:
    """The matmul sweep's outcome as one TaskResult per precision (one sweep measures them all together; a job
    of a single precision, as plugins and tests build them, carries that precision's sweep itself)."""
    out: dict[str | None, TaskResult] = {}
    for job, res in zip(jobs, results):
        if job.kind != "matmul":
            continue
        if not job.precisions:
            out[job.precision] = res
            continue
        sweeps = ((res.value or {}).get("sweeps") or {}) if res.status == OK else {}
        for p in job.precisions:
            value = sweeps.get(p)
            if res.status != OK:
                out[p] = TaskResult(res.task, res.status, None, res.error, res.duration_s, res.output_tail)
            elif value is None:
                out[p] = TaskResult(res.task, "error", None, "the sweep returned nothing for it", res.duration_s)
            else:
                out[p] = TaskResult(res.task, OK, value, None, res.duration_s, res.output_tail)
    return out


def _speedup_range(own: PrecisionTestResult, fp32: PrecisionTestResult) -> list[float] | None:
    """The speed over fp32 from the slow end of one spread to the fast end of the other: the band a decision
    must clear to be more than noise."""
    a, b = own.details.get("gflops_range"), fp32.details.get("gflops_range")
    if not a or not b or not b[0] or not b[1]:
        return None
    return [a[0] / b[1], a[1] / b[0]]


def _busy_note(shape_entries: list[dict]) -> list[str]:
    """A warning when other processes took enough of the CPU to pull figures down."""
    loaded = [e for e in shape_entries if (e.get("other_load") or 0.0) > BUSY_NOTE]
    if not loaded:
        return []
    worst = max(loaded, key=lambda e: e["other_load"])
    dropped = sum(1 for e in loaded if e.get("timed_reps", e["reps"]) > e["reps"])
    contended = sum(1 for e in loaded if e.get("contended"))
    return [
        f"other processes took up to {worst['other_load']:.0%} of the CPU while measuring "
        f"({len(loaded)} of {len(shape_entries)} cases; worst {worst['precision']} "
        f"{'x'.join(map(str, worst['shape']))}): {dropped} of those cases had contended rounds left out, "
        f"{contended} had too few quiet rounds (contended)"
    ]
