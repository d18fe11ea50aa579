"""The adaptive matmul dispatcher: kernel choice per architecture (from the reference tables and gpudash's one
AMP decision, not the seed's list), real matmuls on this CPU against fp32, the run-time fallback, AdaptiveLinear,
and the benchmark."""

import warnings

import pytest
import torch
from bench_runs import keep_run
from torch import nn

from gpudash.amp import get_optimal_dtype
from gpudash.plugin_manager import collect_kernels, make_plugin_manager
from gpudash.plugins_api import Device, Kernel, arch_of, local_device
from gpudash_plugins.adaptive_kernels import AdaptiveLinear, Dispatcher
from gpudash_plugins.adaptive_kernels.benchmark import AdaptiveMatmulBenchmark
from gpudash_plugins.adaptive_kernels.kernels import BUILTIN_KERNELS, FP8_OCP

BF16_TOL = 1e-2  # relative (Frobenius) error of a bf16 matmul against fp32: bf16 keeps 8 significant bits


def nvidia(cc, name=None):
    return Device("nvidia", 0, name or f"GPU cc {cc}", compute_capability=cc, torch_index=0)


def amd(gfx, hip="7.1.0"):
    return Device("amd", 0, f"AMD {gfx}", gfx_target=gfx, torch_index=0, runtime={"hip": hip})


def cpu(*features):
    return Device("cpu", 0, "x86 CPU", cpu_features=list(features))


def rel_error(got, want):
    return ((got.float() - want).norm() / want.norm()).item()


@pytest.fixture
def dispatcher():
    return Dispatcher(BUILTIN_KERNELS)


@pytest.mark.parametrize(
    "device, kernel",
    [
        (nvidia("10.0"), "fp8_e4m3fn_scaled_mm"),  # Blackwell
        (nvidia("12.0"), "fp8_e4m3fn_scaled_mm"),  # Blackwell consumer
        (nvidia("8.9"), "fp8_e4m3fn_scaled_mm"),  # Ada
        (nvidia("8.0"), "bf16"),  # Ampere
        (nvidia("8.6"), "bf16"),
        (nvidia("7.5", "NVIDIA GeForce RTX 2080"), "fp16"),  # Turing TU104: fp16 tensor cores
        (nvidia("7.5", "NVIDIA GeForce GTX 1660 SUPER"), "fp32"),  # TU116: no tensor cores
        (nvidia("7.0"), "fp16"),  # Volta
        (nvidia("6.1"), "fp32"),  # Pascal
        (amd("gfx942"), "fp8_e4m3fnuz_scaled_mm"),  # MI300: FNUZ
        (amd("gfx950"), "fp8_e4m3fn_scaled_mm"),  # MI350: OCP
        (amd("gfx1201"), "fp8_e4m3fn_scaled_mm"),  # RDNA4: OCP, ROCm >= 6.5
        (amd("gfx1201", hip="6.4.0"), "bf16"),  # RDNA4 on an older ROCm: no OCP fp8 _scaled_mm yet
        (amd("gfx90a"), "bf16"),  # CDNA2
        (amd("gfx908"), "bf16"),  # CDNA1
        (amd("gfx1100"), "fp16"),  # RDNA3: bf16 native, but the tables' caution stands without a live probe
        (amd("gfx1151"), "fp16"),  # RDNA3.5
        (amd("gfx1030"), "fp32"),  # RDNA2: no bf16 hardware, no matrix unit
        (amd("gfx1010"), "fp32"),  # RDNA1
        # CPUs: bf16 only once measured faster than fp32 here, as AmpConfig.auto() and the export decide
        (cpu("avx512_f", "avx512_bf16"), "fp32"),
        (cpu("amx_bf16"), "fp32"),
        (cpu("avx2", "fma3"), "fp32"),
    ],
)
def test_kernel_choice_per_architecture(dispatcher, device, kernel):
    assert dispatcher.choose(device).name == kernel


def test_cc_9_0_is_hopper_not_blackwell(dispatcher):
    """The adaptive-operations seed lists 'Blackwell (Compute Capability >= 9.0)'; the reference tables win."""
    hopper = nvidia("9.0")
    assert arch_of(hopper).family == "Hopper"
    assert dispatcher.choose(hopper).name == "fp8_e4m3fn_scaled_mm"
    why = dispatcher.explain(hopper)
    assert why.startswith("fp8_e4m3fn_scaled_mm on Hopper (cc 9.0)") and "Blackwell" not in why.split(":")[0]
    assert arch_of(nvidia("10.0")).family == "Blackwell"


def test_the_dispatcher_follows_a_remembered_measurement_of_this_cpu(no_vendor_libs, native_bf16_cpu):
    """The same remembered benchmark that moves AmpConfig.auto() to bf16 moves the dispatcher: one answer (on a
    CPU with native bf16, where a measurement can move it)."""
    from gpudash.devices import discover

    here = local_device("cpu")
    assert arch_of(here).is_native("bf16")
    assert Dispatcher(BUILTIN_KERNELS).choose(here, requires_grad=True).name == "fp32"
    machine = discover(include_torch=True)
    cpu_dev = next(d for d in machine.devices if d.vendor == "cpu")
    keep_run(machine, cpu_dev, {"bf16": 1.8})
    fresh = Dispatcher(BUILTIN_KERNELS)
    assert fresh.choose(here, requires_grad=True).name == "bf16"
    assert "measured 1.8x fp32" in fresh.explain(here, requires_grad=True)


def test_plugin_kernels_obey_the_decision_too():
    """A plugin's bf16 kernel does not run where gpudash decided fp16 (RDNA3 without a live probe)."""
    mine = Kernel("matmul", "my_bf16", "bf16", lambda q: True, lambda x, w: x @ w.t(), priority=99)
    dispatcher = Dispatcher([mine, *BUILTIN_KERNELS])
    assert dispatcher.choose(amd("gfx1100"), requires_grad=True).name == "fp16"
    assert dispatcher.choose(nvidia("8.0"), requires_grad=True).name == "my_bf16"


def test_fp8_needs_inference_and_aligned_shapes(dispatcher):
    hopper = nvidia("9.0")
    assert dispatcher.choose(hopper, requires_grad=True).name == "bf16"  # no autograd through _scaled_mm
    assert dispatcher.choose(hopper, (128, 100), (64, 100)).name == "bf16"  # K % 16 != 0
    assert dispatcher.choose(hopper, (7, 128), (64, 128)).name == "fp8_e4m3fn_scaled_mm"  # M is free


def test_real_adaptive_matmul_on_this_cpu_against_fp32(dispatcher):
    # the kernel computes in the precision training on this CPU would autocast to (AmpConfig.auto's answer)
    expected = {"bfloat16": "bf16", "float32": "fp32"}[str(get_optimal_dtype("cpu")).removeprefix("torch.")]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(8, 64, 256, generator=gen)
    w = torch.randn(96, 256, generator=gen)
    y, kernel = dispatcher.matmul_with_info(x, w)
    assert kernel == expected
    assert y.shape == (8, 64, 96) and y.dtype == torch.float32
    err = rel_error(y, x @ w.t())
    assert err < BF16_TOL
    if kernel == "bf16":
        assert err > 1e-5  # it really ran in bf16, not fp32 under another name


def test_the_fp8_kernel_itself_computes_correctly():
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no fp8 _scaled_mm")
    gen = torch.Generator().manual_seed(1)
    x, w = torch.randn(32, 64, generator=gen), torch.randn(48, 64, generator=gen)
    y = FP8_OCP.implementation(x, w)  # torch's _scaled_mm runs on the CPU in software
    assert y.dtype == torch.float32 and y.shape == (32, 48)
    assert 1e-4 < rel_error(y, x @ w.t()) < 0.1  # fp8 e4m3 keeps 4 significant bits


def test_a_failing_kernel_falls_back_once_with_a_warning():
    calls = []

    def broken(x, w):
        calls.append(1)
        raise RuntimeError("_scaled_mm is not supported here")

    flaky = Kernel("matmul", "flaky", "fp32", lambda q: True, broken, priority=100)
    dispatcher = Dispatcher([flaky, *BUILTIN_KERNELS])
    x, w = torch.randn(4, 32), torch.randn(16, 32)
    with pytest.warns(RuntimeWarning, match="kernel flaky left out on cpu:0 because it raised RuntimeError"):
        y, kernel = dispatcher.matmul_with_info(x, w)
    assert kernel != "flaky" and rel_error(y, x @ w.t()) < BF16_TOL
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dispatcher.matmul_with_info(x, w)  # not retried, no second warning
    assert len(calls) == 1


def test_shape_errors_are_clear(dispatcher):
    with pytest.raises(ValueError, match="last dimension must match"):
        dispatcher.matmul(torch.randn(4, 8), torch.randn(16, 9))
    with pytest.raises(ValueError, match="must be 2-D"):
        dispatcher.matmul(torch.randn(4, 8), torch.randn(2, 16, 8))


def test_adaptive_linear_is_a_drop_in_nn_linear(dispatcher):
    torch.manual_seed(0)
    plain = nn.Linear(128, 64)
    layer = AdaptiveLinear(128, 64, dispatcher=dispatcher)
    assert isinstance(layer, nn.Linear)
    layer.load_state_dict(plain.state_dict())
    x = torch.randn(4, 10, 128, requires_grad=True)
    y = layer(x)
    assert y.shape == (4, 10, 64) and rel_error(y.detach(), plain(x).detach()) < BF16_TOL
    y.sum().backward()  # training works: fp8 is never chosen when a backward pass is needed
    assert layer.weight.grad is not None and x.grad is not None
    assert layer.last_kernel in ("bf16", "fp32")
    shared = AdaptiveLinear.from_linear(plain, dispatcher=dispatcher)
    assert shared.weight is plain.weight and shared.bias is plain.bias


def test_other_plugins_add_kernels_through_the_hook(tmp_path, monkeypatch):
    (tmp_path / "extra_kernel.py").write_text(
        "from gpudash.plugins_api import Kernel, hookimpl\n"
        "def doubled(x, w):\n"
        "    return 2 * (x @ w.t())\n"
        "@hookimpl\n"
        "def register_kernels(register):\n"
        "    register(Kernel('matmul', 'doubled', 'fp32', lambda q: q.device.vendor == 'cpu', doubled, priority=99))\n"
    )
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "extra_kernel,adaptive_kernels")
    pm = make_plugin_manager([tmp_path], import_here=True)  # kernels run in this process, as in training code
    kernels = [r.obj for r in collect_kernels(pm)]
    assert [k.name for k in kernels] == [
        "fp8_e4m3fnuz_scaled_mm",
        "fp8_e4m3fn_scaled_mm",
        "bf16",
        "fp16",
        "fp32",
        "doubled",
    ]
    dispatcher = Dispatcher([*BUILTIN_KERNELS, *kernels])
    assert len(dispatcher.kernels) == 6  # the built-ins registered through the hook are not doubled up
    x, w = torch.ones(2, 4), torch.ones(3, 4)
    y, kernel = dispatcher.matmul_with_info(x, w)
    assert kernel == "doubled" and torch.equal(y, torch.full((2, 3), 8.0))
    assert dispatcher.choose(nvidia("8.0")).name == "bf16"  # its predicate keeps it to CPUs


def test_benchmark_reports_speedup_and_error_together():
    here = local_device("cpu")
    baseline, adaptive = AdaptiveMatmulBenchmark(size=256).run(here, budget_s=0.2)
    assert (baseline.op, baseline.precision) == ("torch.matmul", "fp32")
    assert adaptive.op == "adaptive_matmul" and adaptive.shape == [256, 256, 256]
    assert adaptive.gflops > 0 and baseline.gflops > 0
    details = adaptive.details
    assert details["kernel"] == Dispatcher().choose(here).name
    assert details["speedup_vs_torch_matmul"] == pytest.approx(baseline.median_s / adaptive.median_s)
    assert 0 <= details["rel_error_vs_fp32"] < BF16_TOL
    assert details["note"].startswith(f"{details['kernel']}: ")
