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
        "spread": {
            "p10_s": case["p10_s"],
            "p25_s": case.get("p25_s", case["p10_s"]),
            "p75_s": case.get("p75_s", case["p90_s"]),
            "p90_s": case["p90_s"],
            "min_s": case["min_s"],
        },
        "reps": case["reps"],
        "efficiency": eff,
        "budget_cut": case.get("budget_cut", False),
        "other_load": case.get("other_load"),
        "steal": case.get("steal"),
        "timed_reps": case.get("timed_reps", case["reps"]),
        "contended": bool(case.get("contended")),
        "contention": case.get("contention"),
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
    quiet = [e for e in entries if not e["contended"]]
    best = max(quiet or entries, key=lambda e: e["gflops"])
    r.supported = True
    r.measured_gflops = best["gflops"]
    r.efficiency = best["efficiency"]
    r.mean_latency_ms = best["mean_s"] * 1000.0
    r.test_size = max(best["shape"])
    r.num_trials = best["reps"]
    flops = 2.0 * best["shape"][0] * best["shape"][1] * best["shape"][2]
    r.details.update(
        best_shape=best["shape"],
        median_gflops=statistics.median(e["gflops"] for e in quiet or entries),
        median_latency_ms=best["median_s"] * 1000.0,
        # The best shape's middle half of calls as GFLOPS (its p75 call time gives the low figure, its p25 the
        # high one): the band a comparison must clear to be more than timing noise.
        gflops_range=[flops / best["spread"]["p75_s"] / 1e9, flops / best["spread"]["p25_s"] / 1e9],
        reliable=not best["contended"],
    )
    if best["contended"]:
        worst = max(entries, key=lambda e: e.get("other_load") or 0.0)
        why = worst.get("contention") or "the measuring rounds saw contention"
        r.details["unreliable_reason"] = (
            f"contended: {why} in every try of all {len(entries)} measured shapes "
            "(too few calls from quiet rounds); not remembered"
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
            entry["spread"] = {k: case[k] for k in ("p10_s", "p25_s", "p75_s", "p90_s", "min_s") if k in case}
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
