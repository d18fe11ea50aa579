"""Child-process tasks that size a batch: trace memory on the CPU, or run trial steps on the GPU.

Run through gpudash.measure.runner (a crash, hang or OOM-kill of the child is a result, not a crash of
gpudash). Both return JSON-able dicts.

trace_memory: FakeTensorMode + MemTracker (torch.distributed._tools.mem_tracker) record every allocation
of a forward and backward pass without computing or allocating anything (torch 2.13's MemTracker works under FakeTensorMode).
The peak at batch 1 and 2 separates per-sample memory from the fixed part. For the reference model the
blocks are identical, so 1- and 2-layer models are traced and extrapolated linearly to the configured
depth (the same numbers as tracing the full model, at a fraction of the time). A user's factory that
cannot run under fake tensors is traced for real on the CPU at batches 1 and 2.

trial_batch: real training steps (forward, backward, AdamW step; two per trial so optimizer state exists)
at growing then bisected batch sizes until the first out-of-memory (batch_search.find_max_batch).
"""

from __future__ import annotations

import gc
import time
from typing import Any

from gpudash.recommend.batch_search import find_max_batch
from gpudash.recommend.reference_model import autocast, build, loss_of


def _peak_bytes(spec: dict[str, Any], batch: int, dtype: str, fake: bool) -> tuple[int, int]:
    """(parameter bytes, peak bytes) of one forward + backward at `batch` on the CPU."""
    import contextlib

    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    with FakeTensorMode() if fake else contextlib.nullcontext():
        model, make_batch = build(spec)
        data = make_batch(batch)
        tracker = MemTracker()
        tracker.track_external(model)
        with tracker:
            with autocast("cpu", dtype):
                loss = loss_of(model, data)
            loss.backward()
        peak = tracker.get_tracker_snapshot("peak")
    params = sum(p.numel() * p.element_size() for p in {id(p): p for p in model.parameters()}.values())
    total = sum(snap.get("Total", 0) for snap in peak.values())
    return params, total


def _per_sample(spec, dtype, fake) -> tuple[int, int, int]:
    """(parameter bytes, per-sample bytes, fixed bytes beyond the parameters)."""
    params, one = _peak_bytes(spec, 1, dtype, fake)
    _, two = _peak_bytes(spec, 2, dtype, fake)
    per_sample = two - one
    return params, per_sample, one - params - per_sample


def trace_memory(spec: dict[str, Any], dtype: str) -> dict[str, Any]:
    import torch

    start = time.perf_counter()
    if spec["kind"] == "reference":
        layers = spec["layers"]
        _, s1, f1 = _per_sample({**spec, "layers": 1}, dtype, fake=True)
        _, s2, f2 = _per_sample({**spec, "layers": 2}, dtype, fake=True)
        per_sample = s1 + (layers - 1) * (s2 - s1)
        fixed = f1 + (layers - 1) * (f2 - f1)
        from gpudash.recommend.model_spec import reference_param_count

        params = reference_param_count(spec)
        how = "FakeTensorMode + MemTracker, 1 and 2 layers extrapolated"
    else:
        try:
            _param_bytes, per_sample, fixed = _per_sample(spec, dtype, fake=True)
            how = "FakeTensorMode + MemTracker"
        except Exception as exc:  # data-dependent code or I/O in the factory: trace it for real
            _param_bytes, per_sample, fixed = _per_sample(spec, dtype, fake=False)
            how = f"MemTracker on a real CPU run (fake tensors failed: {type(exc).__name__})"
        params = _param_count(spec)
    return {
        "param_count": int(params),
        "activation_bytes_per_sample": int(max(per_sample, 1)),
        "fixed_bytes": int(max(fixed, 0)),
        "dtype": dtype,
        "how": how,
        "torch": torch.__version__,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _param_count(spec) -> int:
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with FakeTensorMode():
            model, _ = build(spec)
    except Exception:
        model, _ = build(spec)
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def trial_batch(
    spec: dict[str, Any],
    dtype: str,
    device_type: str = "cuda",
    device_index: int = 0,
    limit: int = 256,
    steps_per_trial: int = 2,
    max_trials: int = 25,
) -> dict[str, Any]:
    import torch

    device = torch.device(device_type, device_index) if device_type != "cpu" else torch.device("cpu")
    model, make_batch = build(spec, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def try_batch(n: int) -> None:
        for _ in range(steps_per_trial):
            data = make_batch(n)
            with autocast(device.type, dtype):
                loss = loss_of(model, data)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        sync()

    def after_oom() -> None:
        optimizer.zero_grad(set_to_none=True)
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()

    start = time.perf_counter()
    result = find_max_batch(try_batch, start=min(2, limit), limit=limit, max_trials=max_trials, after_oom=after_oom)
    return {
        "largest_ok": result.largest_ok,
        "first_oom": result.first_oom,
        "trials": [[n, ok] for n, ok in result.trials],
        "limit": result.limit,
        "dtype": dtype,
        "seconds": round(time.perf_counter() - start, 3),
    }
