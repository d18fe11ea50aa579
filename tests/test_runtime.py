"""gpudash.runtime: routing that follows the tables and checks, memory_management, the profiler, and
optimize_batch_size agreeing with `gpudash export` on replayed machines."""

from __future__ import annotations

import time

import pytest
import torch
from fakes import EXAMPLES

import gpudash.runtime.optimizer
import gpudash.runtime.target
from gpudash.actions.export import export_settings
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.errors import GpudashError, UsageError
from gpudash.runtime import (
    Profiler,
    batch_plan,
    get_enhanced_optimizer,
    get_optimal_device,
    get_performance_stats,
    memory_management,
    optimize_batch_size,
    optimize_tensor_for_operation,
    profiler,
    seed_env_notes,
)

RX5600 = str(EXAMPLES / "rx-5600-xt.json")
STRIX = str(EXAMPLES / "strix-halo-8060s.json")
H100 = str(EXAMPLES / "h100-80gb.json")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(gpudash.runtime.target, "_machines", {})
    monkeypatch.setattr(gpudash.runtime.target, "_targets", {})
    monkeypatch.setattr(gpudash.runtime.optimizer, "_optimizers", {})
    profiler.reset()
    yield
    profiler.reset()


# Routing ---------------------------------------------------------------------------------------------


def test_fft_goes_to_the_cpu_only_where_the_rules_say():
    assert get_optimal_device("fft", replay=RX5600) == "cpu"  # RDNA1: the enhancement summary's hangs
    assert get_optimal_device("matmul", replay=RX5600) == "cuda:0"
    assert get_optimal_device("fft", replay=H100) == "cuda:0"
    assert get_optimal_device("fft", replay=STRIX) == "cuda:0"  # not "every AMD GPU", as the summary has it
    if not torch.cuda.is_available():  # a machine with only its CPU: everything runs there
        assert get_optimal_device("fft") == "cpu"
        assert optimize_tensor_for_operation(torch.ones(2), "fft").device.type == "cpu"


def test_routing_follows_check_results():
    check = {
        "plugin": "rocm_checks",
        "check": "fft_stability",
        "device": "amd:0",
        "status": "fail",
        "summary": "FFT on cuda:0 differs from the CPU",
        "details": {"routing": {"fft": "cpu"}},
    }
    assert get_optimal_device("fft", replay=STRIX, checks=[check]) == "cpu"
    assert get_optimal_device("fft", replay=STRIX, checks=[{**check, "status": "pass"}]) == "cuda:0"


def test_checks_true_runs_the_plugin_checks_and_follows_them():
    assert get_optimal_device("fft", replay=RX5600, checks=True) == "cpu"  # fft_stability's table answer


def test_the_optimizer_object_of_the_enhancement_summary():
    opt = get_enhanced_optimizer(replay=RX5600)
    assert opt is get_enhanced_optimizer(replay=RX5600)
    assert opt.platform.startswith("AMD ROCm/HIP (replayed from rx-5600-xt.json")
    assert opt.device == "cuda:0" and opt.get_optimal_device("fft") == "cpu"
    assert opt.routing()["fft"][0] == "cpu" and "RX 5600 XT" in opt.routing()["fft"][1]
    assert opt.recommended_env()["TORCH_BLAS_PREFER_HIPBLASLT"][0] == "0"
    assert any("only turn on rocBLAS trace logging" in note for note in opt.notes())
    if not torch.cuda.is_available():
        assert get_enhanced_optimizer().platform == "CPU"


def test_the_summary_logging_variables_are_explained_when_set():
    notes = seed_env_notes({"ROCBLAS_LAYER": "1", "HIPBLASLT_LOG_LEVEL": "0", "PATH": "/bin"})
    assert len(notes) == 2
    assert notes[0].startswith("ROCBLAS_LAYER=1 is set: ROCBLAS_LAYER is rocBLAS's logging bit mask")
    assert "selects no GEMM backend" in notes[1] and "TORCH_BLAS_PREFER_HIPBLASLT=0" in notes[1]
    assert seed_env_notes({}) == []


# Memory ----------------------------------------------------------------------------------------------


def test_memory_management_reports_before_and_after_and_frees():
    # The block trims the heap on its way out: trim first, so memory earlier tests freed but the process kept does
    # not sit in "before" and cancel out what the block holds (the figure depended on which tests ran first).
    with memory_management("settle", record=False):
        pass
    with memory_management("epoch") as report:
        kept = torch.ones(64, 1024, 1024)  # 256 MiB
        kept += 1
    assert report.device == "cpu" and report.raised is None
    assert report.change()["process_rss_bytes"] > 200 * 2**20  # still referenced: still there
    assert report.freed[0].startswith("gc.collect() found")
    del kept
    with memory_management("cleanup") as report:
        pass
    assert report.summary().startswith("memory_management('cleanup') on cpu: process rss ")
    recorded = get_performance_stats()["memory_management"]
    assert [r["operation"] for r in recorded] == ["epoch", "cleanup"]


def test_memory_management_reports_a_block_that_raised():
    with pytest.raises(RuntimeError, match="boom"), memory_management("broken", record=False) as report:
        raise RuntimeError("boom")
    assert report.raised == "RuntimeError" and report.after and report.freed


def test_on_a_cuda_device_the_cache_is_emptied(monkeypatch):
    # No GPU here: torch.cuda's allocator calls are stood in for, to see that the real code path uses them.
    calls = []
    allocated = iter([3 * 2**30, 1 * 2**30])
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: next(allocated))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 4 * 2**30)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append("synchronize"))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append("empty_cache"))
    with memory_management("step", "cuda:0", record=False) as report:
        pass
    assert calls == ["synchronize", "empty_cache"]
    assert report.change()["allocated_bytes"] == -2 * 2**30
    assert "torch.cuda.empty_cache() returned cached blocks to the driver" in report.freed


# Profiler --------------------------------------------------------------------------------------------


def test_profiler_times_and_measures_each_operation():
    mine = Profiler()
    for _ in range(3):
        with mine.profile("sleep"):
            time.sleep(0.02)
    kept = mine.profile_operation("allocate", torch.ones, 32, 1024, 1024)  # 128 MiB, kept
    stats = mine.stats()
    sleep = stats["operation_times"]["sleep"]
    assert sleep["calls"] == 3 and sleep["min_s"] >= 0.02 and sleep["mean_s"] == pytest.approx(sleep["total_s"] / 3)
    assert stats["memory"]["allocate"]["change_bytes"] > 100 * 2**20
    assert stats["memory"]["allocate"]["measured"] == "process resident set"
    assert kept.shape == (32, 1024, 1024)


def test_get_performance_stats_names_the_platform():
    with profiler.profile("forward_pass"):
        torch.ones(8) @ torch.ones(8)
    stats = get_performance_stats(replay=RX5600)
    assert stats["platform_info"]["platform"].startswith("AMD ROCm/HIP")
    assert stats["platform_info"]["architecture"] == "RDNA1"
    assert stats["operation_times"]["forward_pass"]["calls"] == 1
    if not torch.cuda.is_available():
        assert get_performance_stats()["platform_info"]["platform"] == "CPU"


# Batch size ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("snapshot", ["rx-5600-xt.json", "h100-80gb.json", "strix-halo-8060s.json", "rtx-3060.json"])
def test_optimize_batch_size_agrees_with_the_export(snapshot):
    replay = str(EXAMPLES / snapshot)
    config = defaults()
    for base in (16, 256):
        config["export"]["target_effective_batch"] = base
        exported = export_settings(Session(config, replay=replay), bench="none").settings.sections["batch"]
        plan = batch_plan(base, replay=replay, config=defaults())
        assert plan.size == exported["size"].value and plan.size == optimize_batch_size(base, replay=replay)
        assert plan.gradient_accumulation_steps == exported["gradient_accumulation_steps"].value
        assert plan.effective == exported["effective"].value
        assert plan.size <= base


def test_optimize_batch_size_is_vram_aware():
    small, big = optimize_batch_size(256, replay=RX5600), optimize_batch_size(256, replay=H100)
    assert 0 < small < big  # 6 GiB holds fewer samples than 80 GiB
    assert optimize_batch_size(4, replay=H100) == 4  # never more than asked for


def test_optimize_batch_size_with_a_trace_agrees_with_the_default_export():
    config = defaults()
    config["export"]["target_effective_batch"] = 1_000_000  # above what fits: the trace decides the size
    config["model"].update(layers=2, hidden=64, heads=4, seq_len=128, vocab=1000)  # a small model: a quick trace
    exported = export_settings(Session(config, replay=H100), bench="quick").settings.sections["batch"]
    assert exported["method"].value == "estimate" and "traced" in exported["activation_bytes_per_sample"].reason
    assert exported["size"].value < 1_000_000
    assert optimize_batch_size(1_000_000, replay=H100, config=config, trace=True) == exported["size"].value


def test_optimize_batch_size_errors_are_clear():
    with pytest.raises(UsageError, match="base_batch_size: expected a positive integer, got 0"):
        optimize_batch_size(0)
    config = defaults()
    config["model"].update(layers=200, hidden=8192, heads=64)  # far too big for 6 GiB
    with pytest.raises(
        GpudashError, match="no batch size for amd:0: estimate: does not fit: weights, gradients and AdamW state take"
    ):
        optimize_batch_size(8, replay=RX5600, config=config)
