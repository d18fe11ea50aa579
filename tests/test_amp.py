"""gpudash.amp: the AMP configuration for training code, from remembered probe and bench results, the tables and
the replayed machine; the bf16 plan's names; gradient checkpointing and the Lightning values."""

from __future__ import annotations

import io
import json

import pytest
import torch
from bench_runs import keep_run
from fakes import EXAMPLES
from torch import nn

from gpudash import amp
from gpudash.devices import discover
from gpudash.errors import GpudashError
from gpudash.measure import probe
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.record import record


@pytest.fixture
def live(no_vendor_libs):
    """This machine, with an empty store of remembered results (conftest isolates the store per test)."""
    machine = discover(include_torch=True)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    return machine, cpu


@pytest.fixture
def native_live(native_bf16_cpu, live):
    """`live`, its CPU described as one with native bf16 (conftest.native_bf16_cpu): a test of what a remembered
    verdict does gets past the tables' "emulated" on a CPU without it."""
    return live


def _native_bf16(cpu) -> bool:
    return bool({"avx512_bf16", "amx_bf16"} & set(cpu.cpu_features))


def _remember(machine, cpu, when="2026-01-02T03:04:05+0000", **verdicts):
    """Store a probe matrix for the CPU with the given precision verdicts (injected results)."""
    results = {}
    for precision, (verdict, reason) in verdicts.items():
        verified = {"verified": True, "slow_reference": True, "failed": False, "not_run": None}[verdict]
        details = {"note": reason} if verdict == "slow_reference" else {}
        results[precision] = PrecisionTestResult(
            precision=precision,
            supported=bool(verified),
            verified=verified,
            verdict=verdict,
            spec="native",
            failure_reason=reason if verdict in ("failed", "not_run") else None,
            max_rel_error=0.004,
            details=details,
        )
    matrix = PrecisionCapabilityMatrix(
        hardware_name=cpu.name, device=cpu.key, results=results, measured_at=when, provenance="measured"
    )
    probe.remember(machine, {cpu.key: matrix})


def _bench(machine, cpu, speedups: dict[str, float], measured: list[str] | None = None, when: str | None = None):
    keep_run(machine, cpu, speedups, measured, when)


# This CPU, live ----------------------------------------------------------------------------------


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
    # "supported" is the tables' (and a probe's) answer, not the choice: native bf16 is supported here
    ok, reason = amp.detect_bf16_support("cpu")
    assert ok is _native_bf16(cpu) and cpu.key in reason


def test_verified_and_measured_results_are_used_and_named(native_live):
    machine, cpu = native_live
    _remember(machine, cpu, bf16=("verified", None))
    _bench(machine, cpu, {"bf16": 2.1})
    ok, reason = amp.detect_bf16_support("cpu")
    assert ok and "verified by the probe" in reason
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.bfloat16 and config.verified is True
    assert any("measured 2.1x fp32 here (benchmark " in r for r in config.reasons)
    assert (config.loss_scaling, config.lightning_precision, config.accelerate_mixed_precision) == (
        "none",
        "bf16-mixed",
        "bf16",
    )
    unverified = amp.AmpConfig.auto("cpu", use_verified=False)
    assert unverified.dtype is torch.float32  # nothing remembered is used: no measurement, so fp32


def test_force_bf16_on_a_device_that_fails_bf16_raises(native_live):
    machine, cpu = native_live
    _remember(machine, cpu, bf16=("failed", "bfloat16 to fp32 on cpu: 4097 of 4097 values wrong, 4097 became 0"))
    with pytest.raises(amp.PrecisionUnavailableError) as caught:
        amp.AmpConfig.force_bf16("cpu")
    message = str(caught.value)
    assert isinstance(caught.value, GpudashError) and isinstance(caught.value, RuntimeError)  # the plan's type too
    assert message.startswith("cannot force bf16 on cpu:") and "cpu:0" in message and "became 0" in message
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.float32 and any("found bf16 broken" in r for r in config.reasons)
    assert amp.detect_bf16_support("cpu")[0] is False  # found broken: not supported, whatever the tables say


def test_force_bf16_allowed_where_native_even_unmeasured(live):
    _, cpu = live
    if not _native_bf16(cpu):
        with pytest.raises(amp.PrecisionUnavailableError, match="emulated"):
            amp.AmpConfig.force_bf16("cpu")
        return
    config = amp.AmpConfig.force_bf16("cpu")
    assert config.dtype is torch.bfloat16 and "bf16 forced" in config.reasons


def test_slow_reference_bf16_is_not_chosen(native_live):
    machine, cpu = native_live
    _remember(machine, cpu, bf16=("slow_reference", "runs only as a slow reference path: 2% of fp32"))
    _bench(machine, cpu, {"bf16": 2.0})  # even measured fast, a slow-reference verdict rules bf16 out
    ok, reason = amp.detect_bf16_support("cpu")
    assert not ok and "slow reference path" in reason
    assert amp.get_optimal_dtype("cpu") is torch.float32


def test_the_newest_benchmark_of_each_precision_decides(native_live):
    machine, cpu = native_live
    _bench(machine, cpu, {"bf16": 2.1}, when="2026-01-01T00:00:00+0000")
    assert amp.get_optimal_dtype("cpu") is torch.bfloat16
    # a newer partial run (`bench --precisions fp32`) measured no bf16: the older bf16 figure still stands
    _bench(machine, cpu, {}, measured=["fp32"], when="2026-01-02T00:00:00+0000")
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.bfloat16 and any("2.1x fp32" in r for r in config.reasons)
    # a newer run that did measure bf16 replaces it
    _bench(machine, cpu, {"bf16": 0.8}, when="2026-01-03T00:00:00+0000")
    config = amp.AmpConfig.auto("cpu")
    assert config.dtype is torch.float32 and any("0.80x the fp32 speed" in r for r in config.reasons)


def test_a_partial_probe_keeps_the_older_results_of_other_precisions(live):
    machine, cpu = live
    _remember(machine, cpu, "2026-01-01T00:00:00+0000", bf16=("verified", None), fp32=("verified", None))
    _remember(machine, cpu, "2026-01-02T00:00:00+0000", fp32=("verified", None), bf16=("not_run", "not run: cancelled"))
    kept = probe.remembered_matrix(machine, cpu)
    assert kept.results["bf16"].verdict == "verified"
    assert kept.results["bf16"].details["measured_at"] == "2026-01-01T00:00:00+0000"
    assert kept.results["fp32"].details["measured_at"] == "2026-01-02T00:00:00+0000"
    assert kept.measured_at == "2026-01-02T00:00:00+0000"
    assert amp.get_bf16_capability("cpu").verified is True


def test_force_fp16_scales_the_loss_and_refuses_a_failed_fp16(live):
    machine, cpu = live
    config = amp.AmpConfig.force_fp16("cpu")
    assert config.dtype is torch.float16 and config.loss_scaling == "dynamic" and config.loss_scale == "dynamic"
    assert config.lightning_precision == "16-mixed" and config.accelerate_mixed_precision == "fp16"
    assert any("bf16-mixed" in r for r in config.reasons)  # Lightning's CPU switch is spelled out
    assert config.grad_scaler().is_enabled()
    _remember(machine, cpu, fp16=("failed", "matmul: 100% of the outputs are NaN"))
    with pytest.raises(amp.PrecisionUnavailableError, match=r"cannot force fp16 on cpu: .*NaN"):
        amp.AmpConfig.force_fp16("cpu")


# Replayed machines -------------------------------------------------------------------------------


def test_replay_env_answers_for_the_replayed_machine(monkeypatch):
    monkeypatch.setenv("GPUDASH_REPLAY", str(EXAMPLES / "h100-80gb.json"))
    config = amp.AmpConfig.auto()
    assert config.dtype is torch.bfloat16 and config.device == "cuda:0"
    assert any("replayed from h100-80gb.json" in r for r in config.reasons)
    assert any("not verified: replayed" in r for r in config.reasons)
    assert amp.AmpConfig.auto("cuda:0").dtype is torch.bfloat16  # raised before: the live machine has no cuda:0
    cap = amp.get_bf16_capability("cuda:0")
    assert (cap.supported, cap.compute_capability, cap.arch, cap.gpu_name) == (
        True,
        (9, 0),
        "Hopper",
        "NVIDIA H100 80GB HBM3",
    )
    with pytest.raises(GpudashError, match="cuda:7"):
        amp.AmpConfig.auto("cuda:7")


def test_an_explicit_snapshot_or_machine_argument(tmp_path):
    dgx = str(EXAMPLES / "dgx-h100-8gpu.json")
    assert amp.AmpConfig.auto("cuda:3", machine=dgx).device == "cuda:3"
    strix = discover(replay=str(EXAMPLES / "strix-halo-8060s.json"))
    config = amp.AmpConfig.auto(machine=strix)
    # RDNA3.5: bf16 is native, but the tables' caution keeps a spec-only answer on fp16 (WMMA)
    assert config.dtype is torch.float16 and config.loss_scaling == "dynamic"
    assert any("caution from the tables" in r and "issues/6034" in r for r in config.reasons)
    out = io.StringIO()
    cap = amp.print_bf16_status(machine=strix, file=out)
    text = out.getvalue()
    assert cap.supported and cap.caution and "Target: gfx1151" in text and "Optimal dtype: torch.float16" in text
    assert "BF16 Supported: True" in text and "Caution: " in text
    v100 = amp.get_bf16_capability(machine=str(EXAMPLES / "dgx2-v100-16gpu.json"))
    assert not v100.supported and v100.optimal_dtype == "float16" and "emulated" in v100.reason


def test_a_snapshot_of_this_machine_replays_to_the_same_answers(live, tmp_path):
    machine, cpu = live
    path = tmp_path / "here.json"
    path.write_text(json.dumps(record(machine, 0, 1)))
    replayed = discover(replay=str(path))
    again = next(d for d in replayed.devices if d.vendor == "cpu")
    from gpudash.knowledge import arch_for

    assert arch_for(again).family == arch_for(cpu).family != "CPU"  # "Zen 5", not "CPU"
    assert (again.logical_cores, again.multiprocessors) == (cpu.logical_cores, cpu.multiprocessors)
    here = amp.get_bf16_capability("cpu")
    there = amp.get_bf16_capability("cpu", machine=str(path))
    assert (there.arch, there.spec, there.supported, there.optimal_dtype) == (
        here.arch,
        here.spec,
        here.supported,
        here.optimal_dtype,
    )


# The bf16 plan's names ---------------------------------------------------------------------------


def test_seed_style_constructors():
    bf16 = amp.AmpConfig(dtype=torch.bfloat16, enabled=True, device="cpu")
    assert (bf16.loss_scaling, bf16.lightning_precision, bf16.accelerate_mixed_precision) == (
        "none",
        "bf16-mixed",
        "bf16",
    )
    fp16 = amp.AmpConfig(dtype="float16", device="cpu")
    assert (
        fp16.dtype is torch.float16
        and fp16.loss_scaling == "dynamic"
        and fp16.trainer_kwargs() == {"precision": "16-mixed"}
    )
    off = amp.AmpConfig(dtype=torch.bfloat16, enabled=False, device="cpu")
    assert off.lightning_precision == "32-true" and off.loss_scaling == "none" and not off.enabled
    fp32 = amp.AmpConfig(dtype=torch.float32)
    assert not fp32.enabled and fp32.accelerate_kwargs() == {"mixed_precision": "no"}
    with pytest.raises(GpudashError, match=r"expected torch\.bfloat16"):
        amp.AmpConfig(dtype=torch.int8)
    with pytest.raises(GpudashError, match="loss_scaling"):
        amp.AmpConfig(dtype=torch.float16, loss_scaling="static")


def test_default_constructor_decides_like_auto(live):
    assert amp.AmpConfig(device="cpu").dtype is amp.AmpConfig.auto("cpu").dtype


def test_tensor_helpers():
    t = torch.tensor([1.5, -2.0], dtype=torch.float32)
    assert not amp.is_bf16_tensor(t) and amp.is_bf16_tensor(amp.safe_to_bf16(t))
    ints = amp.safe_to_bf16(torch.tensor([1, 255, 257]))
    assert ints.dtype is torch.bfloat16 and ints.tolist() == [1.0, 255.0, 256.0]  # bf16 keeps 8 significant bits
    assert amp.safe_to_bf16(torch.tensor([True, False])).tolist() == [1.0, 0.0]
    with pytest.raises(TypeError, match="complex"):
        amp.safe_to_bf16(torch.tensor([1 + 2j]))
    assert not amp.is_bf16_tensor("not a tensor")


def test_get_amp_dtype_for_device_is_the_optimal_dtype(live):
    assert amp.get_amp_dtype_for_device(torch.device("cpu")) is amp.get_optimal_dtype("cpu")


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


# Gradient checkpointing and Lightning ------------------------------------------------------------


class Block(nn.Module):
    def __init__(self, calls: list) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.calls = calls

    def forward(self, x):
        self.calls.append(1)
        return torch.tanh(self.lin(x))


class Net(nn.Module):
    def __init__(self, calls: list) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(calls) for _ in range(3))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x).sum()


def _grads(model, x):
    model.zero_grad()
    model(x).backward()
    return [p.grad.clone() for p in model.parameters()]


def test_gradient_checkpointing_recomputes_blocks_and_keeps_the_gradients():
    torch.manual_seed(0)
    calls: list = []
    plain, checked = Net(calls), Net(calls)
    checked.load_state_dict(plain.state_dict())
    x = torch.randn(4, 16)
    want = _grads(plain, x)
    calls.clear()
    config = amp.AmpConfig(dtype=torch.float32, device="cpu", gradient_checkpointing=True)
    assert config.configure_model(checked) == ["blocks.0", "blocks.1", "blocks.2"]
    got = _grads(checked, x)
    assert len(calls) == 6  # each block ran forward twice: once in the step, once recomputed in backward
    assert all(torch.allclose(a, b) for a, b in zip(want, got))
    checked.eval()
    calls.clear()
    with torch.no_grad():
        checked(x)
    assert len(calls) == 3  # inference is untouched
    assert config.configure_model(checked) == ["blocks.0", "blocks.1", "blocks.2"]  # idempotent
    assert amp.AmpConfig(dtype=torch.float32, device="cpu").configure_model(Net([])) == []  # setting off
    with pytest.raises(GpudashError, match="module_types"):
        amp.enable_gradient_checkpointing(nn.Linear(2, 2))


def test_hugging_face_models_use_their_own_switch():
    class HfLike(nn.Module):
        enabled_with = None

        def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
            self.enabled_with = gradient_checkpointing_kwargs

    model = HfLike()
    assert amp.enable_gradient_checkpointing(model) == ["HfLike"]
    assert model.enabled_with == {"use_reentrant": False}


def test_lightning_trainer_and_module_use_the_config(tmp_path):
    L = pytest.importorskip("lightning")  # not a dependency: runs where lightning is installed

    calls: list = []
    config = amp.AmpConfig(dtype=torch.bfloat16, device="cpu", gradient_checkpointing=True)

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = Net(calls)

        def configure_model(self) -> None:
            self.checkpointed = config.configure_model(self)

        def training_step(self, batch, _index):
            return self.net(batch[0])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 16)), batch_size=4)
    trainer = L.Trainer(
        **config.trainer_kwargs(),
        accelerator="cpu",
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    module = Module()
    trainer.fit(module, data)
    assert trainer.precision == "bf16-mixed"
    assert module.checkpointed == ["net.blocks.0", "net.blocks.1", "net.blocks.2"]
    assert len(calls) == 2 * 6  # two steps, each block recomputed in backward
