"""gpudash.ops, the public home of the adaptive operations: matmul over every plugin source (entry points and
plugin directories, in this process and in a benchmark's child), fp8 only on request, AdaptiveLinear,
AdaptiveAttention, and the system summary (SYSTEM_CONFIG, print_system_info) on this CPU and replayed GPUs."""

from __future__ import annotations

import io
import math
import subprocess
import sys
import textwrap

import pytest
import torch
from fakes import EXAMPLES
from torch import nn

import gpudash.ops
import gpudash.ops.system
import gpudash.runtime.target
import gpudash_plugins.adaptive_kernels.dispatch as plugin_dispatch
from gpudash.actions.export import export_settings
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.errors import UsageError
from gpudash.ops import AdaptiveAttention, AdaptiveLinear, Dispatcher, collect_kernels, matmul, matmul_with_info
from gpudash.plugins_api import Device
from gpudash_plugins.adaptive_kernels.kernels import BUILTIN_KERNELS

BF16_TOL = 1e-2


def here_kernel() -> str:
    """What gpudash's one decision lets a matmul on this CPU compute in (bf16 only once measured faster here)."""
    from gpudash.amp import kernel_precision

    return kernel_precision("cpu").precision


DOUBLED_PLUGIN = """
from gpudash.plugins_api import Kernel, hookimpl

def doubled(x, w):
    return 2 * (x @ w.t())

@hookimpl
def register_kernels(register):
    register(Kernel("matmul", "doubled", "fp32", lambda q: q.device.vendor == "cpu", doubled, priority=99))
"""


def rel_error(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


def pretend(monkeypatch, device: Device) -> None:
    """Fresh dispatchers see every tensor as on `device` (there is no GPU here; the CPU computes)."""
    monkeypatch.setattr(plugin_dispatch, "local_device", lambda _: device)


def hopper() -> Device:
    return Device("nvidia", 0, "H100", compute_capability="9.0", torch_index=0)


@pytest.fixture
def fresh_summaries(monkeypatch):
    """Forget the machines and summaries other tests computed (each test has its own environment)."""
    monkeypatch.setattr(gpudash.runtime.target, "_machines", {})
    monkeypatch.setattr(gpudash.runtime.target, "_targets", {})
    monkeypatch.setattr(gpudash.ops.system, "_configs", {})


@pytest.fixture
def restore_plugin_dirs():
    yield
    gpudash.ops.use_plugin_dirs()  # back to the config file's plugin_dirs


# matmul ----------------------------------------------------------------------------------------------


def test_collect_kernels_keeps_its_import_path_and_the_package_imports_nothing_heavy():
    assert {"fp32", "bf16"} <= {k.name for k in collect_kernels("matmul")}
    script = "import sys, gpudash.ops; print(sorted(m for m in ('torch', 'gpudash.ops.system', 'gpudash_plugins.adaptive_kernels') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_matmul_on_this_cpu_against_fp32():
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(4, 32, 256, generator=gen), torch.randn(96, 256, generator=gen)
    y, kernel = matmul_with_info(x, w)
    assert kernel == here_kernel() and y.shape == (4, 32, 96) and y.dtype == torch.float32
    assert rel_error(y, x @ w.t()) < BF16_TOL
    assert torch.equal(matmul(x, w), y)


def test_fp8_runs_only_when_the_caller_opts_in(monkeypatch):
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no fp8 _scaled_mm")
    pretend(monkeypatch, hopper())
    gen = torch.Generator().manual_seed(3)
    x, w = torch.randn(64, 256, generator=gen), torch.randn(128, 256, generator=gen)
    dispatcher = Dispatcher(BUILTIN_KERNELS)
    assert matmul_with_info(x, w, dispatcher=dispatcher)[1] == "bf16"
    y, kernel = matmul_with_info(x, w, dispatcher=dispatcher, allow_fp8=True)
    assert kernel == "fp8_e4m3fn_scaled_mm" and 1e-2 < rel_error(y, x @ w.t()) < 0.1

    # The seed's bug: AdaptiveLinear under no_grad on Hopper switched to per-tensor fp8 by itself.
    layer = AdaptiveLinear(256, 128, dispatcher=dispatcher)
    reference = nn.functional.linear(x, layer.weight, layer.bias).detach()
    with torch.no_grad():
        out = layer(x)
    assert layer.last_kernel == "bf16" and rel_error(out, reference) < BF16_TOL
    opted = AdaptiveLinear.from_linear(layer, dispatcher=dispatcher, allow_fp8=True)
    with torch.no_grad():
        out = opted(x)
    assert opted.last_kernel == "fp8_e4m3fn_scaled_mm" and 1e-2 < rel_error(out, reference) < 0.1
    assert "fp8 allowed" in repr(opted)


def test_the_plugin_keeps_its_adaptive_linear_name():
    from gpudash_plugins.adaptive_kernels import AdaptiveLinear as FromPlugin

    assert FromPlugin is AdaptiveLinear


def test_one_file_plugin_kernels_from_the_config_and_from_use_plugin_dirs(tmp_path, monkeypatch, restore_plugin_dirs):
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "doubled_kernel.py").write_text(DOUBLED_PLUGIN)
    config = tmp_path / "config.toml"
    config.write_text(f"plugin_dirs = [{str(folder)!r}]\n")
    monkeypatch.setenv("GPUDASH_CONFIG", str(config))
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "doubled_kernel,adaptive_kernels")
    gpudash.ops.use_plugin_dirs()  # the default dispatchers read the config again
    x, w = torch.ones(2, 4), torch.ones(3, 4)
    y, kernel = matmul_with_info(x, w)
    assert kernel == "doubled" and torch.equal(y, torch.full((2, 3), 8.0))
    layer = AdaptiveLinear(4, 3, bias=False)
    assert torch.allclose(layer(x), 2 * (x @ layer.weight.t())) and layer.last_kernel == "doubled"

    gpudash.ops.use_plugin_dirs(tmp_path)  # named here instead: that folder has no plugin
    assert matmul_with_info(x, w)[1] == here_kernel()
    gpudash.ops.use_plugin_dirs(tmp_path / "absent")
    with pytest.raises(UsageError, match="absent: not a directory"):
        matmul(x, w)


def test_a_benchmark_child_uses_the_kernels_of_the_plugins_dir(tmp_path, monkeypatch):
    from gpudash.devices import discover
    from gpudash.plugin_manager import run_benchmarks

    (tmp_path / "kernel_bench.py").write_text(
        DOUBLED_PLUGIN
        + textwrap.dedent("""
        from gpudash.plugins_api import Benchmark, BenchResult

        class WhichKernel(Benchmark):
            name = "which_kernel"
            def run(self, device, budget_s):
                import torch
                from gpudash.ops import matmul_with_info
                _, kernel = matmul_with_info(torch.ones(2, 4), torch.ones(3, 4))
                return [BenchResult("fp32", "matmul", [2, 3, 4], 1.0, 0.1, details={"kernel": kernel})]

        @hookimpl
        def register_benchmarks(register):
            register(WhichKernel())
        """)
    )
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "kernel_bench")
    machine = discover(include_torch=False)
    cpu = [d for d in machine.devices if d.vendor == "cpu"]
    [run] = run_benchmarks(machine, plugin_dirs=[str(tmp_path)], devices=cpu, budget_s=0.1)
    assert run.status == "ok", run.summary
    assert run.results[0]["details"]["kernel"] == "doubled"  # --plugins-dir reached the child's dispatcher


# AdaptiveAttention -----------------------------------------------------------------------------------


def reference_attention(layer: AdaptiveAttention, x: torch.Tensor, mask=None, causal=False) -> torch.Tensor:
    """The same attention in float64 with plain torch, from the layer's own weights."""

    def proj(linear, t):
        return nn.functional.linear(t.double(), linear.weight.double(), linear.bias.double())

    b, n, e = x.shape
    h, d = layer.num_heads, layer.head_dim
    q, k, v = (proj(p, x).view(b, n, h, d).transpose(1, 2) for p in (layer.q_proj, layer.k_proj, layer.v_proj))
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, e)
    return proj(layer.out_proj, out)


def test_adaptive_attention_matches_plain_attention_on_this_cpu():
    torch.manual_seed(0)
    layer = AdaptiveAttention(128, 8)
    x = torch.randn(2, 24, 128)
    with torch.no_grad():
        out = layer(x)
    assert out.shape == x.shape and out.dtype == torch.float32
    assert layer.last_precision == here_kernel() and layer.q_proj.last_kernel == here_kernel()
    assert rel_error(out, reference_attention(layer, x)) < 2 * BF16_TOL
    if here_kernel() == "bf16":
        assert rel_error(out, reference_attention(layer, x)) > 1e-5  # really computed in bf16
    mask = torch.rand(24, 24) > 0.3
    mask.fill_diagonal_(True)
    with torch.no_grad():
        assert rel_error(layer(x, attn_mask=mask), reference_attention(layer, x, mask=mask)) < 2 * BF16_TOL
        assert rel_error(layer(x, is_causal=True), reference_attention(layer, x, causal=True)) < 2 * BF16_TOL


def test_adaptive_attention_trains():
    layer = AdaptiveAttention(64, 4, causal=True)
    x = torch.randn(3, 10, 64, requires_grad=True)
    layer(x).square().mean().backward()
    assert x.grad is not None and all(p.grad is not None for p in layer.parameters())
    with pytest.raises(ValueError, match="not divisible"):
        AdaptiveAttention(100, 8)
    with pytest.raises(ValueError, match=r"query must be \(batch, sequence, 64\)"):
        layer(torch.randn(10, 64))


@pytest.mark.parametrize(
    "device, precision",
    [
        (hopper(), "bf16"),  # fp8 is allowed for the projections below, never inside the attention
        (Device("nvidia", 0, "V100", compute_capability="7.0", torch_index=0), "fp16"),
        (Device("nvidia", 0, "P100", compute_capability="6.0", torch_index=0), "fp32"),
        (Device("amd", 0, "RX 7900", gfx_target="gfx1100", torch_index=0, runtime={"hip": "7.1"}), "fp16"),
    ],
)
def test_attention_precision_follows_the_dispatcher_rules(monkeypatch, device, precision):
    pretend(monkeypatch, device)
    layer = AdaptiveAttention(64, 4, dispatcher=Dispatcher(BUILTIN_KERNELS), allow_fp8=True)
    with torch.no_grad():
        assert layer.attention_precision(torch.randn(2, 16, 64)) == precision


# The system summary ----------------------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="SYSTEM_CONFIG describes the GPU here, not the CPU")
def test_system_config_of_this_cpu(fresh_summaries):
    config = gpudash.ops.SYSTEM_CONFIG
    assert config is gpudash.ops.system_config()  # computed once
    assert (config.vendor, config.device, config.replayed) == ("cpu", "cpu", False)
    assert config.has_fp8_support is False and config.fp8_matmul_kernel is None
    assert config.matmul_kernel == here_kernel()
    assert config.optimal_dtype in ("bfloat16", "float32") and config.optimal_torch_dtype.is_floating_point


def test_system_config_of_replayed_gpus_agrees_with_the_export(fresh_summaries):
    cases = {
        "h100-80gb.json": ("Hopper", True, "float8_e4m3fn", "bf16", "fp8_e4m3fn_scaled_mm"),
        "mi300x.json": ("CDNA3", True, "float8_e4m3fnuz", "bf16", "fp8_e4m3fnuz_scaled_mm"),
        "rtx-3060.json": ("Ampere", False, None, "bf16", None),
        "rx-5600-xt.json": ("RDNA1", False, None, "fp32", None),
    }
    for name, (family, fp8, fp8_dtype, kernel, fp8_kernel) in cases.items():
        replay = str(EXAMPLES / name)
        config = gpudash.ops.system_config(replay=replay)
        assert (config.architecture, config.has_fp8_support, config.fp8_dtype) == (family, fp8, fp8_dtype), name
        assert (config.matmul_kernel, config.fp8_matmul_kernel) == (kernel, fp8_kernel), name
        exported = export_settings(Session(defaults(), replay=replay), bench="none").settings.sections
        assert config.optimal_dtype == exported["amp"]["dtype"].value, name
        assert config.routing == {k: s.value for k, s in exported.get("routing", {}).items()}, name
        assert config.env == {k: s.value for k, s in exported["env"].items()}, name
    assert gpudash.ops.system_config(replay=str(EXAMPLES / "h100-80gb.json")).compute_capability == "9.0"


def test_print_system_info_on_an_rdna1_replay_says_what_the_hipblaslt_fix_really_does(fresh_summaries, monkeypatch):
    monkeypatch.setenv("GPUDASH_REPLAY", str(EXAMPLES / "rx-5600-xt.json"))
    monkeypatch.delenv("ROCBLAS_LAYER", raising=False)
    out = io.StringIO()
    config = gpudash.ops.print_system_info(file=out)
    text = out.getvalue()
    assert config is gpudash.ops.SYSTEM_CONFIG  # GPUDASH_REPLAY: the module-level object is the replay's
    assert "architecture      RDNA1 (gfx target gfx1010)" in text
    assert "routing           fft -> cpu" in text and "env               TORCH_BLAS_PREFER_HIPBLASLT=0" in text
    assert "ROCBLAS_LAYER=1 and HIPBLASLT_LOG_LEVEL=0" in text and "only turn on rocBLAS trace logging" in text
