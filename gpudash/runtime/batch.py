"""optimize_batch_size(base): the batch that fits the device's memory, by the export's own batch rule.

`base` is the batch the training wants per optimizer step (the export's target effective batch). The answer is
the per-device batch the device's memory holds, at most `base`, evened out over whole accumulation steps:
exactly gpudash.recommend.batch.batch_settings, which `gpudash export` writes under [batch]. The model is the
config's [model] (the reference transformer by default, or model.factory), sized by the analytic memory
formula, as `gpudash export --bench none` sizes it; `trace=True` traces it on the CPU in a child process
instead, as the default export does on a CPU or replayed machine. (On a live GPU the default export runs trial
steps on the device; this function does not.) The memory is the device's free memory on a live machine and
its total on a replay, as in the export.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from gpudash.errors import GpudashError, UsageError
from gpudash.runtime.target import resolve

TRACE_TIMEOUT_S = 120.0  # the export's MEMORY_TIMEOUT_S


@dataclass(frozen=True)
class BatchPlan:
    size: int | None  # per device and step; None: nothing fits or nothing is known
    gradient_accumulation_steps: int | None
    effective: int | None  # size x steps
    method: str  # "estimate" | "none"
    reason: str
    dtype: str  # the autocast dtype the memory was sized for
    device: str  # gpudash device key


def _model_memory(facts: Any, spec: dict[str, Any], dtype: str, trace: bool) -> None:
    from gpudash.recommend.model_spec import analytic_memory, traced_memory

    if trace:
        traced, why = traced_memory(spec, dtype, TRACE_TIMEOUT_S)
        if traced is not None:
            facts.model_memory = traced
            return
    else:
        why = "no trace asked for"
    if spec["kind"] == "reference":
        facts.model_memory = analytic_memory(spec, dtype)
    else:
        facts.not_run["memory"] = f"{why}; a factory model cannot be sized without running it (trace=True)"


def batch_plan(
    base_batch_size: int,
    device: Any = None,
    *,
    replay: str | None = None,
    config: dict[str, Any] | None = None,
    trace: bool = False,
) -> BatchPlan:
    """The per-device batch, accumulation steps and effective batch for `base_batch_size` on `device`."""
    from gpudash.config import load_config
    from gpudash.recommend import choose_dtype
    from gpudash.recommend.batch import batch_settings
    from gpudash.recommend.model_spec import model_spec

    if isinstance(base_batch_size, bool) or not isinstance(base_batch_size, int) or base_batch_size < 1:
        raise UsageError(f"base_batch_size: expected a positive integer, got {base_batch_size!r}")
    config = copy.deepcopy(load_config() if config is None else config)
    config["export"]["target_effective_batch"] = base_batch_size
    target = resolve(device, replay=replay, config=config)
    facts = target.facts
    dtype = choose_dtype(facts).dtype
    _model_memory(facts, model_spec(config), dtype, trace)
    found = batch_settings(facts, dtype)
    return BatchPlan(
        size=found["size"].value,
        gradient_accumulation_steps=found["gradient_accumulation_steps"].value,
        effective=found["effective"].value,
        method=str(found["method"].value),
        reason=found["size"].reason,
        dtype=dtype,
        device=target.device.key,
    )


def optimize_batch_size(base_batch_size: int, device: Any = None, **kwargs: Any) -> int:
    """The per-device batch size for `base_batch_size` on `device` (see batch_plan); raises GpudashError with
    the reason when not even one sample fits or the device's memory is unknown."""
    plan = batch_plan(base_batch_size, device, **kwargs)
    if not plan.size:
        raise GpudashError(f"no batch size for {plan.device}: {plan.reason}")
    return plan.size
