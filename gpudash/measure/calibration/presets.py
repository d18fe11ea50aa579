"""Calibration presets: theoretical peaks per precision for named parts.

The preset names, device types and platforms follow the multi-precision calibration format; the figures come from vendor facts
(dense, no sparsity; int8 in GOPS). Where that format's own example was wrong it is corrected here, and
tests/test_profile.py says so: the example gave the Jetson Orin Nano
1000/2000/4000 GFLOPS for fp32/fp16/int8 ("32 Tensor Cores @ 625 MHz"), but fp32 runs on the 1024 CUDA
cores (1024 x 2 x 625 MHz = 1280 GFLOPS) and the tensor cores give 8 SM x 625 MHz x 2048 = 10240 fp16
and 20480 int8 dense (NVIDIA's "40 TOPS" is the sparse int8 figure).

A preset describes a device type ("cpu" or "cuda"; ROCm GPUs are "cuda" devices in torch) on an
architecture ("x86_64" or "aarch64"); `preset_platform` checks that it fits the machine it is used on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudash.errors import UsageError
from gpudash.knowledge import Peak


@dataclass(frozen=True)
class Preset:
    name: str
    hardware_name: str
    device: str  # "cpu" | "cuda"
    platform: str  # "x86_64" | "aarch64"
    vendor: str  # "nvidia" | "amd" | "intel" | "arm": who made the device (GPU presets are checked against it)
    theoretical_peaks: dict[str, float]  # precision -> GFLOPS (GOPS for int8), dense
    provenance: str  # "spec" (a datasheet figure) or "estimated" (a formula from vendor facts)
    basis: str
    peak_bandwidth: float | None = None  # GB/s
    notes: tuple[str, ...] = field(default_factory=tuple)

    def peaks(self) -> dict[str, Peak]:
        """The preset's figures as knowledge Peaks, labelled with where they came from."""
        return {
            p: Peak(g, self.provenance, f"preset {self.name}: {self.basis}") for p, g in self.theoretical_peaks.items()
        }


_REF6 = "ml-engineering spec table (github.com/stas00/ml-engineering, compute/accelerator/README.md)"

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "h100-sxm5",
            "NVIDIA-H100-SXM5-80GB",
            "cuda",
            "x86_64",
            "nvidia",
            {
                "fp64": 66_900.0,
                "fp32": 66_900.0,
                "tf32": 494_700.0,
                "fp16": 989_400.0,
                "bf16": 989_400.0,
                "fp8_e4m3": 1_978_900.0,
                "fp8_e5m2": 1_978_900.0,
                "int8": 1_978_900.0,
            },
            "spec",
            f"{_REF6}; tensor peaks at the 1830 MHz tensor clock; fp64 is the tensor-core figure",
            peak_bandwidth=3350.0,
        ),
        Preset(
            "a100",
            "NVIDIA-A100-SXM4-80GB",
            "cuda",
            "x86_64",
            "nvidia",
            {
                "fp64": 19_500.0,
                "fp32": 19_500.0,
                "tf32": 156_000.0,
                "fp16": 312_000.0,
                "bf16": 312_000.0,
                "int8": 624_000.0,
            },
            "spec",
            f"{_REF6} (nvidia.com/a100); same compute for 40 and 80 GB, bandwidth is the 80 GB SXM figure",
            peak_bandwidth=2039.0,
            notes=("no fp8 on Ampere",),
        ),
        Preset(
            "mi300x",
            "AMD-Instinct-MI300X",
            "cuda",
            "x86_64",
            "amd",
            {
                "fp64": 163_400.0,
                "fp32": 163_400.0,
                "tf32": 653_700.0,
                "fp16": 1_307_400.0,
                "bf16": 1_307_400.0,
                "fp8_e4m3": 2_614_900.0,
                "fp8_e5m2": 2_614_900.0,
                "int8": 2_614_900.0,
            },
            "spec",
            f"{_REF6}: 304 CU x 2100 MHz x 2048 FLOP/clk/CU (fp8 and int8 4096); fp8 is the FNUZ flavour",
            peak_bandwidth=5300.0,
        ),
        Preset(
            "jetson-orin-agx",
            "NVIDIA-Jetson-AGX-Orin-64GB",
            "cuda",
            "aarch64",
            "nvidia",
            {"fp32": 5_325.0, "tf32": 21_299.0, "fp16": 42_598.0, "bf16": 42_598.0, "int8": 85_197.0},
            "estimated",
            "NVIDIA Jetson AGX Orin technical brief: 16 SM (2048 CUDA cores) at 1.3 GHz, 5.3 fp32 TFLOPS, "
            "170 sparse int8 TOPS; tensor rates per SM per clock as A100 (tf32 1024, fp16/bf16 2048, int8 4096)",
            peak_bandwidth=204.8,
        ),
        Preset(
            "jetson-orin-nano",
            "NVIDIA-Jetson-Orin-Nano-8GB",
            "cuda",
            "aarch64",
            "nvidia",
            {"fp32": 1_280.0, "tf32": 5_120.0, "fp16": 10_240.0, "bf16": 10_240.0, "int8": 20_480.0},
            "estimated",
            "NVIDIA Jetson Orin Nano 8GB: 8 SM (1024 CUDA cores, 32 tensor cores) at 625 MHz, 40 sparse int8 TOPS; "
            "fp32 = 1024 x 2 x 625 MHz; tensor rates per SM per clock as A100 (the 1.02 GHz 'Super' mode is 1.63x)",
            peak_bandwidth=68.0,
            notes=(
                "corrects the calibration example's 1000/2000/4000: fp32 does not run on tensor cores, and the tensor-core "
                "rates are 8x and 16x the fp32 rate, not 2x and 4x",
            ),
        ),
        Preset(
            "i7-12700k",
            "Intel-Core-i7-12700K",
            "cpu",
            "x86_64",
            "intel",
            {"fp64": 716.8, "fp32": 1_433.6, "int8": 5_734.4},
            "estimated",
            "formula: 8 P-cores x 4.7 GHz all-core turbo x 32 fp32 FLOP/cycle (AVX2, 2 FMA ports) + 4 E-cores x "
            "3.6 GHz x 16; fp64 half; int8 AVX-VNNI 4x fp32. Alder Lake ships with AVX-512 fused off: fp16 and "
            "bf16 have no native arithmetic (converted to fp32), so they get no peak",
            peak_bandwidth=76.8,
        ),
        Preset(
            "ampere-altra-max",
            "Ampere-Altra-Max-M128-30",
            "cpu",
            "aarch64",
            "arm",
            {"fp64": 3_072.0, "fp32": 6_144.0, "fp16": 12_288.0, "int8": 24_576.0},
            "estimated",
            "formula: 128 Neoverse N1 cores x 3.0 GHz x 16 fp32 FLOP/cycle (2x128-bit FMA); fp64 half; fp16 "
            "(Armv8.2 FP16) 2x; int8 SDOT 4x. N1 has no bf16 instructions (Armv8.6), so bf16 gets no peak",
            peak_bandwidth=204.8,
        ),
    )
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UsageError(f"--preset: unknown preset '{name}' (choose from {', '.join(sorted(PRESETS))})") from None
