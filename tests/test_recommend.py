"""The recommender on constructed facts for each architecture family.

Expected answers come from the vendor facts (NVIDIA, AMD, PyTorch, TransformerEngine, Lightning, accelerate), not
from the code: bf16 from Ampere (cc 8.0) and on CDNA/RDNA3+; Volta and Turing have fp16 tensor cores but no
bf16; consumer Pascal runs fp16 at 1/64; RDNA1 has no matrix cores and AMP was unstable there; TF32 on
cc >= 8.0 and gfx942; fp8 from cc 8.9 (TransformerEngine: Ada needs CUDA >= 12.1), FNUZ dtypes on gfx942.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudash.config import defaults
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.models import DeviceInfo, Runtime
from gpudash.recommend import facts_for, recommend

GIB = 1024**3
CUDA = Runtime(torch="2.5.1+cu124", cuda="12.4")


def nvidia(cc: str, name: str, memory_gib: int = 16, **kw) -> DeviceInfo:
    return DeviceInfo(
        vendor="nvidia", index=0, name=name, compute_capability=cc, memory_total_bytes=memory_gib * GIB, **kw
    )


def amd(gfx: str, name: str, memory_gib: int = 16) -> DeviceInfo:
    return DeviceInfo(vendor="amd", index=0, name=name, gfx_target=gfx, memory_total_bytes=memory_gib * GIB)


def cpu(features: list[str], cores: int = 16) -> DeviceInfo:
    return DeviceInfo(
        vendor="cpu",
        index=0,
        name="Test CPU",
        memory_total_bytes=64 * GIB,
        logical_cores=cores,
        cpu_features=features,
        extra={"cpu_vendor": "AuthenticAMD", "cpu_family": "25", "cpu_model": "17"},
    )


def settings_for(device: DeviceInfo, runtime: Runtime = CUDA, **kw):
    kw.setdefault("host_logical_cores", 32)
    kw.setdefault("accelerators_on_host", 1)
    return recommend(facts_for(device, runtime=runtime, **kw))


def amp_of(s) -> tuple:
    return (
        s.value("amp.dtype"),
        s.value("amp.loss_scaling"),
        s.value("amp.lightning_precision"),
        s.value("amp.accelerate_mixed_precision"),
        s.value("amp.tf32"),
    )


def hf_of(s) -> tuple:
    return tuple(s.value(f"amp.hf_trainer.{k}") for k in ("bf16", "fp16", "tf32"))


BF16 = ("bfloat16", "none", "bf16-mixed", "bf16")
FP16 = ("float16", "dynamic", "16-mixed", "fp16")
FP32 = ("float32", "none", "32-true", "no")


@pytest.mark.parametrize(
    "device, amp, tf32",
    [
        (nvidia("6.1", "NVIDIA GeForce GTX 1080"), FP32, False),  # consumer Pascal: fp16 at 1/64 rate
        (nvidia("7.0", "Tesla V100-SXM2-16GB"), FP16, False),  # fp16 tensor cores, no bf16
        (nvidia("7.5", "Tesla T4"), FP16, False),
        (nvidia("8.0", "NVIDIA A100-SXM4-80GB", 80), BF16, True),
        (nvidia("8.9", "NVIDIA GeForce RTX 4090", 24), BF16, True),
        (nvidia("9.0", "NVIDIA H100 80GB HBM3", 80), BF16, True),
        (nvidia("10.0", "NVIDIA B200", 180), BF16, True),
        (amd("gfx942", "AMD Instinct MI300X", 192), BF16, True),
        (amd("gfx1010", "AMD Radeon RX 5600 XT", 6), FP32, False),  # no matrix cores, AMP unstable (seed)
        # RDNA3 / RDNA3.5: bf16 is native, but the tables caution against it from the spec alone: fp16 on WMMA
        (amd("gfx1100", "AMD Radeon RX 7900 XTX", 24), FP16, False),
        (amd("gfx1151", "AMD Radeon 8060S Graphics", 96), FP16, False),
        (amd("gfx1201", "AMD Radeon RX 9070 XT", 16), BF16, False),  # RDNA4: no caution
        # GTX 16xx: cc 7.5 without tensor cores (TU116): fp16 units at 2x fp32 do not pay unmeasured
        (nvidia("7.5", "NVIDIA GeForce GTX 1660 SUPER", 6), FP32, False),
        (nvidia("7.5", "NVIDIA GeForce RTX 2080 Ti", 11), FP16, False),
    ],
)
def test_amp_by_family(device, amp, tf32):
    s = settings_for(device)
    assert amp_of(s) == (*amp, tf32)
    # transformers refuses tf32=True without a CUDA build (every ROCm torch): HF's flag is NVIDIA-only
    hf_tf32 = tf32 and device.vendor == "nvidia"
    assert hf_of(s) == (amp[0] == "bfloat16", amp[0] == "float16", hf_tf32)
    assert s.value("amp.float32_matmul_precision") == ("high" if tf32 else "highest")
    assert s.value("amp.autocast") is (amp[0] != "float32")
    for dotted, setting in s.items():  # every value explains itself
        assert setting.reason.strip(), dotted


def test_gtx_16_reasons_say_no_tensor_cores():
    reason = settings_for(nvidia("7.5", "NVIDIA GeForce GTX 1660 Ti")).get("amp.dtype").reason
    assert "no tensor cores" in reason and "runs on tensor cores" not in reason
    t4 = settings_for(nvidia("7.5", "Tesla T4")).get("amp.dtype").reason
    assert "fp16 runs on tensor cores" in t4


def test_hf_tf32_is_false_on_rocm_and_says_why():
    s = settings_for(amd("gfx942", "AMD Instinct MI300X", 192), Runtime(torch="2.5.1+rocm6.2", hip="6.2"))
    assert s.value("amp.tf32") is True and s.value("amp.hf_trainer.tf32") is False
    reason = s.get("amp.hf_trainer.tf32").reason
    assert "torch.version.cuda is None" in reason and "transformers" in reason


def test_rdna3_caution_is_cited_and_a_live_probe_overrides_it():
    rdna3 = amd("gfx1100", "AMD Radeon RX 7900 XTX", 24)
    spec = settings_for(rdna3, Runtime(hip="6.4"))
    reason = spec.get("amp.dtype").reason
    assert spec.value("amp.dtype") == "float16" and "caution from the tables" in reason
    assert "pytorch/pytorch/pull/189394" in reason and "WMMA" in reason
    # verified correct but not measured faster: the caution stands
    slow = settings_for(rdna3, Runtime(hip="6.4"), probe=matrix({"bf16": {"verified": True, "verdict": "verified"}}))
    assert slow.value("amp.dtype") == "float16" and "its speed was not measured" in slow.get("amp.dtype").reason
    # verified correct AND faster than fp32 (the probe's timing): the live result overrides the caution
    live = matrix({"bf16": {"verified": True, "verdict": "verified", "details": {"rate_vs_fp32": 1.9}}})
    s = settings_for(rdna3, Runtime(hip="6.4"), probe=live)
    assert s.value("amp.dtype") == "bfloat16" and s.get("amp.dtype").provenance == "measured"
    assert "overrides the tables' caution" in s.get("amp.dtype").reason and "1.90x fp32" in s.get("amp.dtype").reason
    # a failed bf16 probe never overrides anything
    broken = matrix({"bf16": {"verified": False, "verdict": "failed", "failure_reason": "zeros"}})
    assert settings_for(rdna3, Runtime(hip="6.4"), probe=broken).value("amp.dtype") == "float16"


def test_pascal_reason_names_the_slow_fp16():
    s = settings_for(nvidia("6.1", "NVIDIA GeForce GTX 1080"))
    assert "1/64" in s.get("amp.dtype").reason


def test_spec_only_is_marked_not_verified():
    s = settings_for(nvidia("9.0", "NVIDIA H100 80GB HBM3", 80), replayed=True)
    assert s.get("amp.dtype").provenance == "spec"
    assert "not verified: replayed" in s.get("amp.dtype").reason
    assert all(setting.provenance != "measured" for _, setting in s.items())
    assert s.value("fp8.verified") is False and "replayed" in s.get("fp8.verified").reason


@pytest.mark.parametrize(
    "device, runtime, available, dtype, te",
    [
        (nvidia("8.0", "A100"), CUDA, False, None, False),
        (nvidia("8.9", "L4"), CUDA, True, "float8_e4m3fn", True),
        (nvidia("8.9", "L4"), Runtime(cuda="11.8"), True, "float8_e4m3fn", False),  # Ada needs CUDA >= 12.1
        (nvidia("9.0", "H100"), CUDA, True, "float8_e4m3fn", True),
        (nvidia("10.0", "B200"), CUDA, True, "float8_e4m3fn", True),
        (amd("gfx942", "MI300X"), Runtime(hip="6.2"), True, "float8_e4m3fnuz", True),
        (amd("gfx1151", "Radeon 8060S"), Runtime(hip="7.1"), False, None, False),
    ],
)
def test_fp8(device, runtime, available, dtype, te):
    s = settings_for(device, runtime)
    assert s.value("fp8.available") is available
    assert s.value("fp8.torch_dtype") == dtype
    assert s.value("fp8.transformer_engine") is te
    assert s.value("fp8.enabled") is False  # never switched on by the export
    if dtype == "float8_e4m3fnuz":
        assert s.value("fp8.flavour") == "fnuz" and s.value("fp8.torch_dtype_e5m2") == "float8_e5m2fnuz"
    if te:
        assert s.value("fp8.lightning_precision") == "transformer-engine"
        assert s.value("fp8.accelerate_backend") == "TE"


def test_ada_transformer_engine_reason_names_cuda():
    s = settings_for(nvidia("8.9", "L4"), Runtime(cuda="11.8"))
    assert "12.1" in s.get("fp8.transformer_engine").reason


def test_rdna1_env_and_routing():
    s = settings_for(amd("gfx1010", "AMD Radeon RX 5600 XT", 6), Runtime(hip="6.0.32830"))
    assert s.sections["env"]["TORCH_BLAS_PREFER_HIPBLASLT"].value == "0"  # hipBLAS, not hipBLASLt (seed)
    assert s.value("routing.fft") == "cpu"
    assert "PYTORCH_CUDA_ALLOC_CONF" not in s.sections["env"]


def test_hipblaslt_supported_targets_get_no_override():
    assert (
        "TORCH_BLAS_PREFER_HIPBLASLT" not in settings_for(amd("gfx942", "MI300X"), Runtime(hip="6.2")).sections["env"]
    )
    # gfx1151 joined PyTorch's hipBLASLt list with ROCm 7.0
    assert (
        settings_for(amd("gfx1151", "8060S"), Runtime(hip="6.4")).sections["env"]["TORCH_BLAS_PREFER_HIPBLASLT"].value
        == "0"
    )
    assert (
        "TORCH_BLAS_PREFER_HIPBLASLT" not in settings_for(amd("gfx1151", "8060S"), Runtime(hip="7.1")).sections["env"]
    )


def test_nvidia_allocator_setting():
    s = settings_for(nvidia("8.0", "A100"))
    assert s.sections["env"]["PYTORCH_CUDA_ALLOC_CONF"].value == "expandable_segments:True"


BF16_CHECK_FAIL = {
    "plugin": "rocm_checks",
    "check": "bf16_conversion",
    "device": "amd:0",
    "status": "fail",
    "summary": "bf16 -> fp32 gave zeros on 3 of 5 sizes",
    "remediation": "use fp16 autocast",
    "env": {"TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL": "1"},
    "details": {"precision": "bf16"},
}


def test_rdna35_with_failing_bf16_check_uses_fp16():
    s = settings_for(amd("gfx1151", "AMD Radeon 8060S Graphics", 96), Runtime(hip="7.1"), checks=[BF16_CHECK_FAIL])
    assert amp_of(s) == (*FP16, False)  # WMMA fp16, dynamic loss scaling
    assert "bf16_conversion" in s.get("amp.dtype").reason
    assert s.get("amp.dtype").provenance == "measured"
    assert s.sections["env"]["TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL"].value == "1"


def test_check_for_another_device_is_ignored():
    other = dict(BF16_CHECK_FAIL, device="amd:1")
    s = settings_for(amd("gfx942", "MI300X"), Runtime(hip="7.1"), checks=[other])
    assert s.value("amp.dtype") == "bfloat16"


def test_warning_check_keeps_bf16_but_says_so_and_failing_check_env_wins():
    warn = dict(
        BF16_CHECK_FAIL, status="warn", summary="bf16 partial on RDNA3.5", env={"PYTORCH_TUNABLEOP_ENABLED": "1"}
    )
    blas_pass = {
        "plugin": "p",
        "check": "blas",
        "device": "amd:0",
        "status": "pass",
        "summary": "ok",
        "env": {"TORCH_BLAS_PREFER_HIPBLASLT": "1"},
    }
    blas_fail = {
        "plugin": "p",
        "check": "blas2",
        "device": "amd:0",
        "status": "fail",
        "summary": "Lt wrong",
        "env": {"TORCH_BLAS_PREFER_HIPBLASLT": "0"},
    }
    s = settings_for(amd("gfx942", "MI300X"), Runtime(hip="7.1"), checks=[warn, blas_pass, blas_fail])
    assert s.value("amp.dtype") == "bfloat16" and "bf16 partial" in s.get("amp.dtype").reason
    env = {k: v.value for k, v in s.sections["env"].items()}
    assert env == {"PYTORCH_TUNABLEOP_ENABLED": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "0"}


def matrix(results: dict[str, dict], speedups: dict[str, float] | None = None) -> PrecisionCapabilityMatrix:
    return PrecisionCapabilityMatrix(
        hardware_name="test",
        speedup_vs_fp32=speedups or {},
        results={
            p: PrecisionTestResult(precision=p, supported=r.get("verified", True), **r) for p, r in results.items()
        },
    )


def test_probe_failure_moves_ampere_to_fp16():
    probe = matrix({"bf16": {"verified": False, "failure_reason": "max_rel_error 0.5"}, "fp16": {"verified": True}})
    s = settings_for(nvidia("8.0", "A100"), probe=probe)
    assert amp_of(s)[:4] == FP16
    assert "max_rel_error 0.5" in s.get("amp.dtype").reason


def test_probe_verified_bf16_is_measured():
    s = settings_for(nvidia("9.0", "H100"), probe=matrix({"bf16": {"verified": True}, "tf32": {"verified": True}}))
    assert s.get("amp.dtype").provenance == "measured" and "verified by the probe" in s.get("amp.dtype").reason
    assert s.get("amp.tf32").provenance == "measured"


def test_gpu_bf16_measured_slower_than_fp32_is_not_used():
    s = settings_for(nvidia("8.6", "RTX 3060"), bench=matrix({}, {"bf16": 0.8, "fp16": 2.0}))
    assert s.value("amp.dtype") == "float16"


def test_packed_fp16_without_matrix_units_needs_a_measured_gain():
    rdna2 = amd("gfx1030", "AMD Radeon RX 6800")
    assert settings_for(rdna2).value("amp.dtype") == "float32"
    fast = settings_for(rdna2, bench=matrix({}, {"fp16": 1.9}))
    assert fast.value("amp.dtype") == "float16" and fast.get("amp.dtype").provenance == "measured"


AVX512_BF16 = ["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_vnni"]


@pytest.mark.parametrize(
    "features, speedups, dtype, provenance",
    [
        (AVX512_BF16, {"bf16": 2.1}, "bfloat16", "measured"),  # native and measured faster
        (AVX512_BF16, {"bf16": 1.02}, "float32", "measured"),  # native but no real gain
        (AVX512_BF16, None, "float32", "spec"),  # native, not measured (--bench none): stay fp32
        (["avx2", "fma3"], {"bf16": 1.5}, "float32", "spec"),  # not native: emulated bf16 is never chosen
    ],
)
def test_cpu_bf16_only_when_native_and_measured_faster(features, speedups, dtype, provenance):
    bench = matrix({}, speedups) if speedups is not None else None
    s = settings_for(
        cpu(features),
        Runtime(torch="2.13.0+cpu"),
        bench=bench,
        not_run={} if bench else {"bench": "--bench none: spec facts only"},
    )
    assert s.value("amp.dtype") == dtype
    assert s.get("amp.dtype").provenance == provenance
    assert s.value("amp.tf32") is False and s.value("amp.hf_trainer.fp16") is False
    assert s.value("amp.lightning_precision") == ("bf16-mixed" if dtype == "bfloat16" else "32-true")
    if speedups is None:
        assert "--bench quick" in s.get("amp.dtype").reason


def test_dataloader_rules():
    gpu = settings_for(nvidia("9.0", "H100"), host_logical_cores=64, accelerators_on_host=8)
    assert (gpu.value("dataloader.num_workers"), gpu.value("dataloader.pin_memory")) == (7, True)
    big = settings_for(nvidia("9.0", "H100"), host_logical_cores=128, accelerators_on_host=1)
    assert big.value("dataloader.num_workers") == 8  # capped
    unknown = settings_for(nvidia("9.0", "H100"), host_logical_cores=None)
    assert unknown.get("dataloader.num_workers").provenance == "estimated"
    small_cpu = settings_for(cpu(AVX512_BF16, cores=2), host_logical_cores=2)
    assert (small_cpu.value("dataloader.num_workers"), small_cpu.value("dataloader.pin_memory")) == (0, False)
    big_cpu = settings_for(cpu(AVX512_BF16, cores=32), host_logical_cores=32)
    assert big_cpu.value("dataloader.num_workers") == 4


def test_header_and_tree_shape():
    s = settings_for(
        nvidia("9.0", "NVIDIA H100 80GB HBM3"),
        generated="2026-01-01T00:00:00+0000",
        replayed=True,
        source="replayed from h100.json",
    )
    tree = s.to_tree()
    head = tree["gpudash"]
    assert head["version"] == 1 and head["replayed"] is True and head["device"] == "NVIDIA H100 80GB HBM3"
    assert head["device_type"] == "cuda" and head["generated"] == "2026-01-01T00:00:00+0000"
    assert "torch_index" not in head  # unknown on a replay: left out, never null
    assert tree["amp"]["hf_trainer"] == {"bf16": True, "fp16": False, "tf32": True}
    assert set(tree["reasons"]) == set(tree["provenance"])
    assert "amp.dtype" in tree["reasons"] and "amp.hf_trainer.tf32" in tree["reasons"]


def test_config_is_respected():
    config = defaults()
    config["export"]["target_effective_batch"] = 64
    from gpudash.recommend.facts import BatchTrial

    trial = BatchTrial(largest_ok=100, first_oom=101, trials=((2, True),), limit=64, dtype="bfloat16")
    s = settings_for(nvidia("9.0", "H100"), config=config, batch_trial=trial)
    assert s.value("batch.target_effective") == 64
    assert (s.value("batch.size"), s.value("batch.gradient_accumulation_steps")) == (64, 1)


def test_recommend_is_pure_no_torch_no_textual():
    code = (
        "import sys\n"
        "from gpudash.models import DeviceInfo\n"
        "from gpudash.recommend import facts_for, recommend\n"
        "recommend(facts_for(DeviceInfo(vendor='nvidia', index=0, name='H100', compute_capability='9.0')))\n"
        "bad = [m for m in ('torch', 'textual') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
