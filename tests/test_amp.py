"""gpudash.amp: the AMP configuration for training code, from verified probe results, torch and the spec."""

from __future__ import annotations

import pytest
import torch

from gpudash import amp
from gpudash.devices import discover
from gpudash.errors import GpudashError
from gpudash.measure import probe
from gpudash.measure.bench.store import append_run
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult


@pytest.fixture
def live(no_vendor_libs):
    """This machine, with an empty store of remembered results (conftest isolates the store per test)."""
    machine = discover(include_torch=True)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    return machine, cpu


def _native_bf16(cpu) -> bool:
    return bool({"avx512_bf16", "amx_bf16"} & set(cpu.cpu_features))


def _remember(machine, cpu, **verdicts):
    """Store a probe matrix for the CPU with the given precision verdicts (injected results)."""
    results = {}
    for precision, (verdict, reason) in verdicts.items():
        verified = {"verified": True, "slow_reference": True, "failed": False}[verdict]
        details = {"note": reason} if verdict == "slow_reference" else {}
        results[precision] = PrecisionTestResult(
            precision=precision,
            supported=verified,
            verified=verified,
            verdict=verdict,
            spec="native",
            failure_reason=reason if verdict == "failed" else None,
            max_rel_error=0.004,
            details=details,
        )
    matrix = PrecisionCapabilityMatrix(
        hardware_name=cpu.name,
        device=cpu.key,
        results=results,
        measured_at="2026-01-02T03:04:05+0000",
        provenance="measured",
    )
    probe.remember(machine, {cpu.key: matrix})


def test_auto_on_this_cpu_without_measurements_stays_fp32(live):
    # The same rule as `gpudash export`: a CPU gets bf16 only once bf16 was measured faster than fp32.
    _, cpu = live
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.float32 and not config.enabled
    assert config.lightning_precision == "32-true" and config.accelerate_mixed_precision == "no"
    reasons = " ".join(config.reasons)
    assert ("not measured" in reasons) if _native_bf16(cpu) else ("bf16 is emulated" in reasons)
    assert config.verified is None  # nothing remembered
    assert amp.get_optimal_dtype("cpu") is torch.float32
    ok, reason = amp.detect_bf16_support("cpu")
    assert not ok and cpu.key in reason


def _bench(machine, cpu, speedup):
    """A benchmark run as `gpudash bench` keeps it (the bench JSON contract, which the history's reader checks):
    the document of a run that measured nothing, with the speedup of a run that did."""
    from gpudash.measure.bench.replay import replayed_report
    from gpudash.measure.bench.report import bench_json

    doc = bench_json(machine, {cpu.key: replayed_report(cpu, ["fp32", "bf16"], "quick", None)}, "quick")
    doc["devices"][0]["speedup_vs_fp32"] = {"bf16": speedup}
    append_run(machine, doc)


def test_verified_and_measured_results_are_used_and_named(live):
    machine, cpu = live
    if not _native_bf16(cpu):
        pytest.skip("this CPU has no native bf16")
    _remember(machine, cpu, bf16=("verified", None))
    _bench(machine, cpu, 2.1)
    ok, reason = amp.detect_bf16_support("cpu")
    assert ok and "cpu:0" in reason and "measured 2.1x fp32" in reason
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.bfloat16 and config.verified is True
    assert (config.loss_scaling, config.lightning_precision, config.accelerate_mixed_precision) == (
        "none",
        "bf16-mixed",
        "bf16",
    )
    ok_unverified, _ = amp.detect_bf16_support("cpu", use_verified=False)
    assert not ok_unverified  # nothing remembered is used: no measurement, so fp32


def test_force_bf16_on_a_device_that_fails_bf16_raises(live):
    machine, cpu = live
    _remember(machine, cpu, bf16=("failed", "bfloat16 to fp32 on cpu: 4097 of 4097 values wrong, 4097 became 0"))
    with pytest.raises(amp.PrecisionUnavailableError) as caught:
        amp.AmpConfig.force_bf16("cpu")
    message = str(caught.value)
    assert isinstance(caught.value, GpudashError)
    assert message.startswith("cannot force bf16 on cpu:") and "cpu:0" in message and "became 0" in message
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.float32 and any("found bf16 broken" in r for r in config.reasons)


def test_force_bf16_allowed_where_native_even_unmeasured(live):
    _, cpu = live
    if not _native_bf16(cpu):
        with pytest.raises(amp.PrecisionUnavailableError, match="emulated"):
            amp.AmpConfig.force_bf16("cpu")
        return
    config = amp.AmpConfig.force_bf16("cpu")
    assert config.dtype is torch.bfloat16 and "bf16 forced" in config.reasons


def test_slow_reference_bf16_is_not_chosen(live):
    machine, cpu = live
    _remember(machine, cpu, bf16=("slow_reference", "runs only as a slow reference path: 2% of fp32"))
    _bench(machine, cpu, 2.0)  # even measured fast, a slow-reference verdict rules bf16 out
    ok, reason = amp.detect_bf16_support("cpu")
    assert not ok and "slow reference path" in reason


def test_cpu_bf16_needs_a_benchmark_that_measured_it_faster(live):
    machine, cpu = live
    if not _native_bf16(cpu):
        pytest.skip("this CPU has no native bf16; the benchmark rule never gets a say")
    _bench(machine, cpu, 2.1)
    assert amp.detect_bf16_support("cpu")[0]
    _bench(machine, cpu, 0.8)  # the newest run decides
    ok, reason = amp.detect_bf16_support("cpu")
    assert not ok and "0.80x the fp32 speed" in reason
    assert amp.AmpConfig.auto("cpu").dtype is torch.float32


def test_force_fp16_scales_the_loss_and_refuses_a_failed_fp16(live):
    machine, cpu = live
    config = amp.AmpConfig.force_fp16("cpu")
    assert config.dtype is torch.float16 and config.loss_scaling == "dynamic"
    assert config.lightning_precision == "16-mixed" and config.accelerate_mixed_precision == "fp16"
    assert any("bf16-mixed" in r for r in config.reasons)  # Lightning's CPU switch is spelled out
    assert config.grad_scaler().is_enabled()
    _remember(machine, cpu, fp16=("failed", "matmul: 100% of the outputs are NaN"))
    with pytest.raises(amp.PrecisionUnavailableError, match=r"cannot force fp16 on cpu: .*NaN"):
        amp.AmpConfig.force_fp16("cpu")


def test_autocast_and_scaler_helpers_follow_the_config():
    bf16 = amp.AmpConfig.for_dtype("bfloat16", "cpu", ["test"])
    layer = torch.nn.Linear(8, 4)
    with bf16.autocast():
        assert layer(torch.randn(2, 8)).dtype is torch.bfloat16
    assert not bf16.grad_scaler().is_enabled()
    fp32 = amp.AmpConfig.for_dtype("float32", "cpu", ["test"])
    with amp.autocast_context(fp32):
        assert layer(torch.randn(2, 8)).dtype is torch.float32
    assert not amp.grad_scaler(fp32).is_enabled()


def test_lightning_mapping_and_device_names():
    assert [amp.lightning_precision(d) for d in (torch.bfloat16, torch.float16, "float32")] == [
        "bf16-mixed",
        "16-mixed",
        "32-true",
    ]
    assert amp.resolve_device("cpu") == amp.resolve_device(torch.device("cpu")) == "cpu"
    assert amp.resolve_device(1) == "cuda:1"
    with pytest.raises(GpudashError, match="device 'tpu'"):
        amp.resolve_device("tpu")
