"""Batch rules: the per-device batch that fits with the safety margin, then accumulation to the target.

Two ways to know what fits, best first:
  trial    - trial steps on the device caught the first out-of-memory; the margin (config
             export.memory_margin) is taken off the largest size that ran, as Lightning's binsearch does.
  estimate - device memory x (1 - margin), minus 16 bytes per parameter (fp32 weights, gradients and the two
             AdamW states), minus the batch-independent memory the trace saw, divided by the activation
             memory per sample (traced on the CPU, or from the analytic formula when nothing could run).
When not even one sample fits, `fits` is false and the reason says what would make it fit (no_fit.py).
Then the size is capped at the target effective batch (config export.target_effective_batch), and the
accumulation steps are ceil(target / size); the size is then evened out to ceil(target / steps) so the
effective batch lands as close to the target as whole steps allow.
"""

from __future__ import annotations

import math

from gpudash.models import ESTIMATED, MEASURED, SPEC
from gpudash.recommend import no_fit
from gpudash.recommend.facts import BatchTrial, Facts, ModelMemory
from gpudash.recommend.settings import Setting

TRAINING_BYTES_PER_PARAM = 16  # fp32 weights 4 + gradients 4 + AdamW exp_avg 4 + exp_avg_sq 4
GIB = 1024**3


def _gib(n: float) -> str:
    return f"{n / GIB:.1f} GiB" if n >= GIB else f"{n / 2**20:.0f} MiB"


def accumulate(fit: int, target: int) -> tuple[int, int, int]:
    """(per-device size, accumulation steps, effective batch) for a fitting size and a target."""
    size = max(1, min(fit, target))
    steps = math.ceil(target / size)
    size = math.ceil(target / steps)
    return size, steps, size * steps


def _from_trial(trial: BatchTrial, margin: float) -> tuple[int, str, str]:
    tried = len(trial.trials)
    if trial.first_oom is None:
        return (
            trial.largest_ok,
            (
                f"{trial.largest_ok} ran without running out of memory in {tried} trial steps "
                f"(the search stops at the target batch {trial.limit})"
            ),
            MEASURED,
        )
    if not trial.largest_ok:
        return 0, f"trial steps ({tried} trials): {no_fit.trial(trial.first_oom)}", MEASURED
    fit = max(1, int(trial.largest_ok * (1 - margin)))
    return (
        fit,
        (
            f"trial steps: {trial.largest_ok} fitted, {trial.first_oom} ran out of memory ({tried} trials); "
            f"{margin:.0%} margin off the largest -> {fit}"
        ),
        MEASURED,
    )


def _from_estimate(facts: Facts, mem: ModelMemory, margin: float, dtype: str) -> tuple[int | None, str, str]:
    total = facts.memory_available_bytes or facts.device.memory_total_bytes
    if not total:
        return None, "device memory unknown: cannot estimate a batch size", SPEC
    which = "free" if facts.memory_available_bytes else "total"
    usable = total * (1 - margin)
    static = mem.param_count * TRAINING_BYTES_PER_PARAM + mem.fixed_bytes
    per_sample = max(1, mem.activation_bytes_per_sample)
    how = (
        "traced on the CPU (FakeTensor + MemTracker)"
        if mem.method == "traced"
        else "from the analytic formula (nothing ran)"
    )
    mismatch = f"; traced at {mem.dtype}, training at {dtype}" if mem.dtype != dtype else ""
    basis = (
        f"{_gib(total)} {which} x (1 - {margin:g}) = {_gib(usable)}; weights+grads+AdamW "
        f"{_gib(mem.param_count * TRAINING_BYTES_PER_PARAM)} ({mem.param_count / 1e6:.1f} M params), "
        f"other fixed {_gib(mem.fixed_bytes)}; activations {per_sample / 2**20:.0f} MiB per sample {how}"
        f"{mismatch}"
    )
    if usable <= static:
        advice = no_fit.model_alone(usable, TRAINING_BYTES_PER_PARAM, mem.param_count, mem.fixed_bytes)
        return 0, f"estimate: {advice} ({basis})", ESTIMATED
    fit = int((usable - static) // per_sample)
    if not fit:
        return 0, f"estimate: {no_fit.one_sample(per_sample, usable - static)} ({basis})", ESTIMATED
    return fit, f"estimate: {fit} samples fit ({basis})", ESTIMATED


def _method_reason(method: str, facts: Facts) -> str:
    if method == "trial":
        return "trial steps on the device, doubling then bisecting until it ran out of memory"
    if method == "none":
        return facts.not_run.get("memory") or "nothing known about the model's memory"
    where = "a replayed machine" if facts.replayed else "the CPU" if facts.is_cpu else "this device"
    if facts.bench_mode == "none":
        where += " (--bench none)"
    return f"no trial steps on {where}: estimated from parameter, gradient, optimizer-state and activation memory"


def batch_settings(facts: Facts, dtype: str) -> dict[str, Setting]:
    export = facts.config["export"]
    margin, target = float(export["memory_margin"]), int(export["target_effective_batch"])
    fit: int | None
    if facts.batch_trial is not None:
        fit, how, prov = _from_trial(facts.batch_trial, margin)
        method = "trial"
    elif facts.model_memory is not None:
        fit, how, prov = _from_estimate(facts, facts.model_memory, margin, dtype)
        method = "estimate"
    else:
        fit, how, prov = (
            None,
            f"batch size not determined: {facts.not_run.get('memory') or 'no model memory facts'}",
            SPEC,
        )
        method = "none"
    model = (
        facts.model_memory.description
        if facts.model_memory
        else (facts.batch_trial.description if facts.batch_trial else "")
    )
    out = {
        "method": Setting(method, _method_reason(method, facts), prov),
        "memory_margin": Setting(
            margin, "config export.memory_margin: headroom for the runtime, workspaces and fragmentation", SPEC
        ),
        "target_effective": Setting(target, "config export.target_effective_batch", SPEC),
        "world_size": Setting(
            1,
            "accumulation is per process: with N data-parallel processes divide gradient_accumulation_steps by N",
            SPEC,
        ),
    }
    if model:
        out["model"] = Setting(model, "the model the batch size was found for (config [model])", SPEC)
    if facts.model_memory is not None and method == "estimate":
        out["activation_bytes_per_sample"] = Setting(
            facts.model_memory.activation_bytes_per_sample,
            f"activation memory per sample, {facts.model_memory.method}",
            facts.model_memory.provenance,
        )
    if fit is not None:  # known either way: false when not even one sample fits (export then exits 1)
        out["fits"] = Setting(
            bool(fit), how if not fit else "at least one sample fits (batch.size says how many)", prov
        )
    if not fit:
        out["size"] = Setting(None, how, prov)
        out["gradient_accumulation_steps"] = Setting(None, "no batch size, so no accumulation", prov)
        out["effective"] = Setting(None, "no batch size", prov)
        return out
    size, steps, effective = accumulate(fit, target)
    capped = f"; capped at the target {target}" if fit > target else ""
    evened = f"; evened out to {size} for {steps} steps" if size != min(fit, target) else ""
    out["size"] = Setting(size, f"{how}{capped}{evened}", prov)
    out["gradient_accumulation_steps"] = Setting(
        steps, f"ceil({target} / {min(fit, target)}) steps reach the target effective batch {target}", prov
    )
    out["effective"] = Setting(effective, f"{size} x {steps} per device", prov)
    return out
