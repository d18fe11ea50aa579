"""Batch size: the OOM search with a fake step, OOM detection, the estimate and accumulation arithmetic,
the memory trace against the analytic formula, and the real trial step on the CPU."""

from __future__ import annotations

import math

import pytest
import torch

from gpudash.config import defaults
from gpudash.models import DeviceInfo
from gpudash.recommend import facts_for, recommend
from gpudash.recommend.batch import TRAINING_BYTES_PER_PARAM, accumulate
from gpudash.recommend.batch_search import find_max_batch, is_oom
from gpudash.recommend.facts import BatchTrial, ModelMemory
from gpudash.recommend.model_spec import analytic_memory, model_spec, reference_param_count

GIB = 1024**3


class FakeStep:
    """A training step that runs out of memory above `threshold` samples, with a given error."""

    def __init__(self, threshold: int, error=lambda n: torch.OutOfMemoryError(f"CUDA out of memory at {n}")):
        self.threshold, self.error, self.calls, self.cleanups = threshold, error, [], 0

    def __call__(self, n: int) -> None:
        self.calls.append(n)
        if n > self.threshold:
            raise self.error(n)

    def cleanup(self) -> None:
        self.cleanups += 1


@pytest.mark.parametrize("threshold", [1, 2, 3, 37, 100, 255])
def test_search_finds_the_threshold(threshold):
    step = FakeStep(threshold)
    result = find_max_batch(step, start=2, limit=1000, after_oom=step.cleanup)
    assert result.largest_ok == threshold and result.first_oom == threshold + 1
    assert step.cleanups == sum(1 for _, ok in result.trials if not ok)
    first_oom = next(i for i, (_, ok) in enumerate(result.trials) if not ok)
    growth = step.calls[: first_oom + 1]
    assert growth == [2 * 2**i for i in range(len(growth))]  # doubles until the first OOM, then bisects
    assert len(step.calls) <= 2 * math.log2(threshold + 2) + 2


@pytest.mark.parametrize(
    "message",
    [
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.11 GiB total capacity)",
        "HIP out of memory. Tried to allocate 1.00 GiB (GPU 0; 5.98 GiB total capacity)",
        "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 bytes",
    ],
)
def test_search_catches_oom_messages(message):
    step = FakeStep(10, error=lambda n: RuntimeError(message))
    assert find_max_batch(step, start=2, limit=64).largest_ok == 10


def test_search_stops_at_the_limit_without_oom():
    step = FakeStep(10_000)
    result = find_max_batch(step, start=2, limit=48)
    assert (result.largest_ok, result.first_oom) == (48, None)
    assert step.calls == [2, 4, 8, 16, 32, 48]


def test_search_nothing_fits():
    result = find_max_batch(FakeStep(0), start=2, limit=64)
    assert (result.largest_ok, result.first_oom) == (0, 1)


def test_search_other_errors_propagate():
    def step(n):
        raise ValueError("shape mismatch")

    with pytest.raises(ValueError):
        find_max_batch(step, limit=8)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        find_max_batch(FakeStep(1, error=lambda n: RuntimeError("CUDA error: an illegal memory access")), limit=8)


def test_search_respects_max_trials():
    step = FakeStep(5000)
    result = find_max_batch(step, start=1, limit=10**6, max_trials=4)
    assert len(result.trials) == 4 and result.largest_ok == 8


def test_is_oom():
    assert is_oom(torch.OutOfMemoryError("x")) and is_oom(torch.cuda.OutOfMemoryError("y"))
    assert is_oom(MemoryError()) and is_oom(RuntimeError("HIP out of memory. Tried to allocate"))
    assert not is_oom(RuntimeError("CUDA error: device-side assert")) and not is_oom(ValueError("out of memory"))


@pytest.mark.parametrize(
    "fit, target, expected",
    [
        (33, 256, (32, 8, 256)),  # 8 steps; 33 evened out to 32
        (48, 256, (43, 6, 258)),
        (1000, 256, (256, 1, 256)),  # capped at the target
        (1, 7, (1, 7, 7)),
        (5, 7, (4, 2, 8)),
    ],
)
def test_accumulate(fit, target, expected):
    assert accumulate(fit, target) == expected


def h100() -> DeviceInfo:
    return DeviceInfo(
        vendor="nvidia", index=0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0", memory_total_bytes=80 * GIB
    )


def test_trial_result_gets_the_margin():
    trial = BatchTrial(largest_ok=37, first_oom=38, trials=((2, True), (64, False)), limit=256, dtype="bfloat16")
    s = recommend(facts_for(h100(), batch_trial=trial))
    # int(37 * 0.9) = 33 fits; ceil(256 / 33) = 8 steps; ceil(256 / 8) = 32 per step
    assert (s.value("batch.size"), s.value("batch.gradient_accumulation_steps"), s.value("batch.effective")) == (
        32,
        8,
        256,
    )
    assert s.value("batch.method") == "trial" and s.get("batch.size").provenance == "measured"


def test_estimate_arithmetic():
    params, per_sample, fixed = 100_000_000, GIB // 2, GIB
    memory = ModelMemory("m", params, per_sample, "bfloat16", "traced", "measured", fixed_bytes=fixed)
    s = recommend(facts_for(h100(), model_memory=memory))
    usable = 80 * GIB * 0.9 - params * TRAINING_BYTES_PER_PARAM - fixed
    fit = int(usable // per_sample)
    assert s.value("batch.method") == "estimate" and s.get("batch.size").provenance == "estimated"
    assert s.value("batch.size") * s.value("batch.gradient_accumulation_steps") >= 256
    assert s.value("batch.size") <= fit and accumulate(fit, 256)[0] == s.value("batch.size")


def test_estimate_model_too_big():
    memory = ModelMemory("huge", 10_000_000_000, GIB, "bfloat16", "traced", "measured")
    s = recommend(facts_for(h100(), model_memory=memory))
    assert s.value("batch.size") is None and "does not fit" in s.get("batch.size").reason
    assert "size" not in s.to_tree()["batch"] and "batch.size" in s.to_tree()["reasons"]


def test_estimate_uses_free_memory_when_known():
    memory = ModelMemory("m", 1_000_000, GIB, "bfloat16", "traced", "measured")
    full = recommend(facts_for(h100(), model_memory=memory)).value("batch.size")
    busy = recommend(facts_for(h100(), model_memory=memory, memory_available_bytes=20 * GIB)).value("batch.size")
    assert busy < full


SMALL = {"kind": "reference", "layers": 4, "hidden": 256, "heads": 4, "seq_len": 256, "vocab": 2000}


def test_reference_param_count_matches_the_model():
    from gpudash.recommend.reference_model import build_reference

    model, _ = build_reference(SMALL)
    assert sum(p.numel() for p in model.parameters()) == reference_param_count(SMALL)
    assert reference_param_count(model_spec(defaults())) == 124_439_808  # GPT-2 small with tied embeddings


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_trace_agrees_with_the_formula(dtype):
    from gpudash.recommend.memory_task import trace_memory

    traced = trace_memory(SMALL, dtype)
    formula = analytic_memory(SMALL, dtype)
    assert traced["param_count"] == formula.param_count
    ratio = formula.activation_bytes_per_sample / traced["activation_bytes_per_sample"]
    assert 0.85 < ratio < 1.15, ratio


def test_trace_of_a_factory_model(tmp_path, monkeypatch):
    (tmp_path / "my_models.py").write_text(
        "import torch\n"
        "def make():\n"
        "    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))\n"
        "    return model, torch.randn(4, 64)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from gpudash.recommend.memory_task import trace_memory

    traced = trace_memory({"kind": "factory", "factory": "my_models:make"}, "float32")
    assert traced["param_count"] == 64 * 256 + 256 + 256 + 1
    # per sample at least the hidden activations: 256 fp32 values before and after the ReLU
    assert traced["activation_bytes_per_sample"] >= 256 * 4


def test_real_trial_step_on_the_cpu():
    from gpudash.recommend.memory_task import trial_batch

    tiny = {"kind": "reference", "layers": 1, "hidden": 32, "heads": 2, "seq_len": 16, "vocab": 64}
    result = trial_batch(tiny, "bfloat16", device_type="cpu", limit=8)
    assert (result["largest_ok"], result["first_oom"]) == (8, None)
    assert result["trials"] == [[2, True], [4, True], [8, True]]
