"""One benchmark task's outcome as report entries: a shape's figures, a precision's record, the bandwidth."""

from __future__ import annotations

import statistics

from gpudash.knowledge import peak_memory_bandwidth_gbps
from gpudash.measure.runner import OK, TaskResult
from gpudash.measure.schema import NOT_RUN, PrecisionTestResult
from gpudash.models import DeviceInfo


def shape_entry(precision: str, case: dict, peak) -> dict:
    """One measured shape of a matmul sweep, with its efficiency against `peak` (a knowledge.Peak or None)."""
    eff = case["gflops"] / peak.gflops if peak and peak.gflops else None
    return {
        "precision": precision,
        "op": "matmul",
        "shape": case["shape"],
        "gflops": case["gflops"],
        "median_s": case["median_s"],
        "mean_s": case["mean_s"],
        "spread": {"p10_s": case["p10_s"], "p90_s": case["p90_s"], "min_s": case["min_s"]},
        "reps": case["reps"],
        "efficiency": eff,
        "budget_cut": case.get("budget_cut", False),
        "other_load": case.get("other_load"),
    }


def precision_result(
    precision: str, spec: str | None, job_result: TaskResult | None, peak, entries: list[dict], reason: str | None
) -> PrecisionTestResult:
    """The PrecisionTestResult of one precision, from its task's outcome."""
    r = PrecisionTestResult(precision=precision, supported=False, spec=spec)
    if job_result is None:
        r.failure_reason, r.verdict = reason, NOT_RUN
        return r
    if job_result.status != OK:
        r.failure_reason = f"benchmark {job_result.status}: {job_result.error}"
        return r
    value = job_result.value or {}
    cases = value.get("cases") or []
    skipped = [
        {"shape": c["shape"], "status": c["status"], "reason": c.get("reason")}
        for c in cases
        if c.get("status") != "ok"
    ]
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
    r.details.update(
        best_shape=best["shape"],
        median_gflops=statistics.median(e["gflops"] for e in entries),
        median_latency_ms=best["median_s"] * 1000.0,
    )
    if peak is not None:
        r.details["peak_provenance"] = peak.provenance
    return r


def bandwidth_entries(device: DeviceInfo, job_result: TaskResult | None) -> list[dict]:
    """The bandwidth task's cases; the copy's efficiency is against the memory's spec bandwidth."""
    spec = peak_memory_bandwidth_gbps(device)
    if job_result is None:
        return []
    if job_result.status != OK:
        return [
            {"op": "copy", "status": job_result.status, "reason": f"benchmark {job_result.status}: {job_result.error}"}
        ]
    out = []
    for case in (job_result.value or {}).get("cases") or []:
        entry = dict(case)
        if case.get("status") == "ok":
            entry["spread"] = {"p10_s": case["p10_s"], "p90_s": case["p90_s"], "min_s": case["min_s"]}
            entry["efficiency"] = None
            if spec is not None and case["op"] == "copy":
                entry.update(
                    efficiency=case["gbps"] / spec.gflops,
                    peak_gbps=spec.gflops,
                    peak_provenance=spec.provenance,
                    peak_basis=spec.basis,
                )
        out.append(entry)
    return out
