"""Hardware claims in the project's seed documents that the vendors contradict: the tables follow the vendor.

Each test names the seed claim and the vendor fact that replaces it.
"""

from __future__ import annotations

import pytest

from gpudash.knowledge import amd_arch, nvidia_arch, peak_memory_bandwidth_gbps, peaks_for
from gpudash.models import DeviceInfo


def test_blackwell_is_not_cc_9():
    # GPU-adaptive-operations seed: "Blackwell (Compute Capability >= 9.0): Native FP8 support with _scaled_mm".
    # NVIDIA CUDA GPUs list: 9.0 is Hopper; Blackwell is 10.0/10.3 (B200/B300), 11.0 (Thor), 12.0/12.1.
    # PyTorch's _scaled_mm gate allows fp8 from 8.9 (Ada), so fp8 is no Blackwell marker either.
    assert nvidia_arch("9.0").family == "Hopper"
    assert {nvidia_arch(cc).family for cc in ("10.0", "10.3", "11.0", "12.0", "12.1")} == {"Blackwell"}
    assert nvidia_arch("8.9").is_native("fp8_e4m3") and nvidia_arch("8.9").family == "Ada"


def test_jetson_orin_nano_peaks_follow_nvidia():
    # Multi-precision-calibration seed: Orin Nano fp32 1000 GFLOPS "32 Tensor Cores @ 625 MHz", fp16 2x, int8 4x,
    # and bf16/fp64 unsupported. fp32 runs on the CUDA cores (8 SMs x 128): at 625 MHz 1280 GFLOPS, and cc 8.7
    # (Ampere) has bf16 tensor cores at 8x the fp32 rate. The module's SM count and clock are taken here as the
    # driver reports them: the vendor's per-module figures were not confirmed, so the table has no Orin Nano row.
    dev = DeviceInfo(
        "nvidia", 0, "NVIDIA Jetson Orin Nano 8GB", compute_capability="8.7", multiprocessors=8, max_clock_mhz=625
    )
    peaks = peaks_for(dev)
    assert peaks["fp32"].gflops == pytest.approx(1280.0) and peaks["fp32"].provenance == "estimated"
    assert peaks["bf16"].gflops == pytest.approx(8 * 625 * 2048 / 1000)  # 8x fp32, not 2x
    assert peaks["int8"].gflops == pytest.approx(8 * 625 * 4096 / 1000)
    assert peak_memory_bandwidth_gbps(dev) is None  # no confirmed module figure
    orin = nvidia_arch("8.7")
    assert orin.is_native("bf16") and orin.is_native("tf32") and orin.is_native("fp64")


def test_orin_agx_has_more_than_three_precisions():
    # Calibration seed: "jetson-orin-agx ... 3 precisions (FP32, FP16, INT8)". Ampere (cc 8.7) tensor cores also
    # run tf32 and bf16.
    native = {p for p, level in nvidia_arch("8.7").precisions.items() if level == "native"}
    assert {"fp32", "fp16", "int8", "tf32", "bf16"} <= native


def test_rdna3_bf16_is_in_the_hardware():
    # ROCm compatibility guide seed: "RDNA 3 (GFX11) BFloat16 ... disabled due to precision issues". The hardware
    # has bf16 WMMA (GPUOpen "WMMA on RDNA 3"; LLVM gfx11 bf16 WMMA and v_dot2_f32_bf16): native, with the
    # software faults as a cited caution instead of a claim about the silicon.
    for gfx in ("gfx1100", "gfx1101", "gfx1102", "gfx1103"):
        arch = amd_arch(gfx)
        assert arch.precisions["bf16"] == "native" and arch.matrix_unit == "WMMA"
        assert "bf16" in arch.cautions


def test_turing_has_no_bf16_hardware_and_ampere_bf16_is_not_3_to_4x():
    # BF16 AMP plan seed: "Turing (7.5) has some BF16 support but not full"; "Ampere+ ... native BF16 (3-4x faster
    # than FP32)". Turing whitepaper: tensor cores run fp16/int8/int4 only, so bf16 is emulated on 7.5. The
    # datasheets give A100 312 vs 19.5 TFLOPS (16x) and the RTX 3090 71 vs 35.6 (2x): the ratio is the part's.
    assert nvidia_arch("7.5", "NVIDIA GeForce RTX 2080 Ti").precisions["bf16"] == "emulated"
    a100 = peaks_for(DeviceInfo("nvidia", 0, "NVIDIA A100-SXM4-80GB", compute_capability="8.0"))
    rtx = peaks_for(DeviceInfo("nvidia", 0, "NVIDIA GeForce RTX 3090", compute_capability="8.6"))
    assert a100["bf16"].gflops / a100["fp32"].gflops == pytest.approx(16.0)
    assert rtx["bf16"].gflops / rtx["fp32"].gflops == pytest.approx(2.0, rel=0.01)
