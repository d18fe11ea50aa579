"""Cited peak-rate tables: named parts (datasheet figures) and FLOP per clock per SM/CU per family.

Pure data; gpudash/knowledge/peaks.py turns it into Peak figures. Units: TFLOPS (int8 in TOPS) for parts,
FLOP per clock for rates, GB/s for bandwidth. Each row names its source.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Part:
    label: str
    vendor: str
    needs: tuple[str, ...]  # every token must be in the normalised device name
    source: str
    tflops: dict[str, float] = field(default_factory=dict)
    bandwidth_gbs: float | None = None
    avoid: tuple[str, ...] = ()  # no token may be in the name (PCIe/NVL/Laptop variants differ)


def _fp8(v: float) -> dict[str, float]:
    return {"fp8_e4m3": v, "fp8_e5m2": v}


_ML_ENG = "ml-engineering spec table (github.com/stas00/ml-engineering, compute/accelerator/README.md)"
_H100 = {"fp64": 66.9, "fp32": 66.9, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, **_fp8(1978.9), "int8": 1978.9}
_A100 = {"fp64": 19.5, "fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "int8": 624.0}

# Named parts, first match wins (more specific entries first). fp64 is the matmul (tensor/matrix core) figure
# where one exists. GeForce rows use the fp32-accumulate column: PyTorch GEMMs accumulate in fp32.
PARTS: tuple[Part, ...] = (
    # H100 SXM: ml-engineering table; glennklockwood.com/garden/processors/h100. 3.35 TB/s: NVIDIA H100 datasheet.
    Part(
        "NVIDIA H100 SXM",
        "nvidia",
        ("h100",),
        f"{_ML_ENG} (H100 SXM); NVIDIA H100 datasheet",
        _H100,
        3350.0,
        avoid=("pcie", "nvl"),
    ),
    # GH200: same compute as H100 per the ml-engineering MAMF table (theory 989); memory differs per SKU.
    Part("NVIDIA GH200", "nvidia", ("gh200",), f"{_ML_ENG} (GH200 theory = H100)", _H100, None),
    # H200: ml-engineering note 16 "H200 is the same as H100" (memory 141 GB, 4.8 TB/s).
    Part(
        "NVIDIA H200 SXM",
        "nvidia",
        ("h200",),
        f"{_ML_ENG} (note 16: H200 = H100 compute, 4.8 TB/s)",
        _H100,
        4800.0,
        avoid=("nvl",),
    ),
    # A100 compute: ml-engineering A100 table (nvidia.com/a100), same for SXM and PCIe, 40 and 80 GB.
    # Bandwidth by variant: NVIDIA A100 datasheet as quoted by thundercompute.com and glennklockwood.com.
    Part(
        "NVIDIA A100 80GB PCIe",
        "nvidia",
        ("a100", "80gb", "pcie"),
        f"{_ML_ENG} (A100); NVIDIA A100 datasheet",
        _A100,
        1935.0,
    ),
    Part("NVIDIA A100 80GB SXM", "nvidia", ("a100", "80gb"), f"{_ML_ENG} (A100); NVIDIA A100 datasheet", _A100, 2039.0),
    Part("NVIDIA A100 40GB", "nvidia", ("a100",), f"{_ML_ENG} (A100); NVIDIA A100 datasheet", _A100, 1555.0),
    # RTX 4090 (AD102, 128 SM): waredb.com and gigagpu pages [partly unverified]; 1008 GB/s [not re-checked].
    Part(
        "NVIDIA GeForce RTX 4090",
        "nvidia",
        ("rtx", "4090"),
        "waredb.com and gigagpu RTX 4090 pages (fp32-accumulate column)",
        {"fp64": 1.29, "fp32": 82.6, "tf32": 82.6, "fp16": 165.2, "bf16": 165.2, **_fp8(330.3), "int8": 660.6},
        1008.0,
        avoid=("d", "laptop", "mobile"),
    ),
    # RTX 3090 (GA102, 82 SM): NVIDIA GA102 whitepaper App. A [unverified]; 936 GB/s [not re-checked].
    Part(
        "NVIDIA GeForce RTX 3090",
        "nvidia",
        ("rtx", "3090"),
        "NVIDIA GA102 whitepaper App. A (fp32-accumulate column) [UNVERIFIED]",
        {"fp64": 0.56, "fp32": 35.6, "tf32": 35.6, "fp16": 71.0, "bf16": 71.0, "int8": 284.0},
        936.0,
        avoid=("ti", "laptop", "mobile"),
    ),
    # RTX 3060 12 GB (GA106, 28 SM): 3584 CUDA cores, 1777 MHz boost, 192-bit 15 Gbps = 360 GB/s
    # (pcpartdb.com, techtaks.com quoting NVIDIA). fp32 = 3584 x 2 x 1.777 GHz. NVIDIA's "101 tensor TFLOPS" is
    # sparse fp16-accumulate = 28 SM x 1777 MHz x 2048; the rest follow the GA10x GeForce ratios of the RTX 3090
    # row: fp16/bf16 fp32-accumulate = 1/4 of it, int8 dense = 2048/SM, tf32 = fp32 rate, fp64 = 1/64 of fp32.
    Part(
        "NVIDIA GeForce RTX 3060",
        "nvidia",
        ("rtx", "3060"),
        "NVIDIA RTX 3060 announcement (3584 cores, 1.78 GHz, 101 sparse tensor TFLOPS) via pcpartdb.com/techtaks.com",
        {"fp64": 0.199, "fp32": 12.74, "tf32": 12.74, "fp16": 25.47, "bf16": 25.47, "int8": 101.9},
        360.0,
        avoid=("ti", "laptop", "mobile"),
    ),
    # MI300X (304 CU, 2100 MHz): ml-engineering table and formula 2100e6*256*2*1216; 5.3 TB/s: AMD via
    # aiwiki.ai / codesota.com. fp64 matrix split from AMD's datasheet [unverified].
    Part(
        "AMD Instinct MI300X",
        "amd",
        ("mi300x",),
        f"{_ML_ENG} (MI300X); AMD MI300X datasheet (5.3 TB/s)",
        {"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, **_fp8(2614.9), "int8": 2614.9},
        5300.0,
    ),
    # MI250X: one torch device is one GCD, so the whole-card figures (47.9/95.7/383) are halved (ml-engineering:
    # "MI250X has 2 GCDs - the theoretical TFLOPS needs to be halved"). 3276.8 GB/s card total [not re-checked].
    Part(
        "AMD Instinct MI250X (one GCD)",
        "amd",
        ("mi250x",),
        f"{_ML_ENG} (MI250X, halved per GCD)",
        {"fp64": 47.85, "fp32": 47.85, "fp16": 191.5, "bf16": 191.5, "int8": 191.5},
        1638.4,
    ),
    # RX 5600 XT reference spec: 36 CU, 1560 MHz boost, 7.19 TFLOPS fp32, 192-bit 12 Gbps = 288 GB/s
    # (tomshardware.com launch article quoting AMD). Later BIOSes raised some cards to 14 Gbps / 336 GB/s.
    Part(
        "AMD Radeon RX 5600 XT",
        "amd",
        ("5600", "xt"),
        "AMD RX 5600 XT launch spec via tomshardware.com",
        {"fp32": 7.19},
        288.0,
        avoid=("m",),
    ),
    # Radeon 8060S (Strix Halo, 40 CU, 2900 MHz): no vendor FLOPS figure found, so compute uses the formula.
    # Memory is the system's 256-bit LPDDR5X-8000: 256 GB/s, shared with the CPU (svethardware.cz, techpowerup.com).
    Part(
        "AMD Radeon 8060S",
        "amd",
        ("8060s",),
        "AMD Strix Halo spec (256-bit LPDDR5X-8000) via svethardware.cz",
        {},
        256.0,
    ),
)

# FLOP per clock per SM (NVIDIA) or per CU (AMD), dense; int8 in OP. Sources per row; rows reproduce the named
# figures above where both exist (e.g. 132 SM x 1830 MHz x 4096 = 989.4 TFLOPS for H100 bf16).
NV_RATES: dict[tuple[int, int], dict[str, int]] = {
    # P100: 56 SM x 1480 MHz -> 5.3/10.6/21.2 TFLOPS fp64/fp32/fp16 (NVIDIA P100 datasheet figures).
    (6, 0): {"fp64": 64, "fp32": 128, "fp16": 256},
    # GP10x (consumer Pascal, P40): 128 FP32 cores/SM; fp64 at 1/32 and fp16 at 1/64 of the fp32 rate.
    (6, 1): {"fp64": 8, "fp32": 256, "fp16": 4},
    (6, 2): {"fp64": 8, "fp32": 256, "fp16": 4},
    # V100: 80 SM x 1530 MHz -> 7.8/15.7/125 TFLOPS (8 first-gen tensor cores x 64 FMA).
    (7, 0): {"fp64": 64, "fp32": 128, "fp16": 1024},
    (7, 2): {"fp32": 128},
    # TU10x: T4 40 SM x 1590 MHz -> 65 TFLOPS fp16, 130 TOPS int8; fp64 1/32.
    (7, 5): {"fp64": 4, "fp32": 128, "fp16": 1024, "int8": 2048},
    # A100 (ml-engineering table, NVIDIA A100 datasheet): 2048 16-bit, TF32 1024, FP64 TC 128, INT8 4096.
    (8, 0): {"fp64": 128, "fp32": 128, "tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096},
    # GA10x full rate (A40/A10/RTX A6000); GeForce halves tf32/16-bit (RTX 3090 row above: 82 SM x 1695 MHz).
    (8, 6): {"fp64": 4, "fp32": 256, "tf32": 512, "fp16": 1024, "bf16": 1024, "int8": 2048},
    (8, 7): {"fp32": 256},
    # AD10x full rate (L4: 58 SM x 2040 MHz -> 121 TFLOPS bf16); GeForce halves (RTX 4090 row above).
    (8, 9): {
        "fp64": 4,
        "fp32": 256,
        "tf32": 512,
        "fp16": 1024,
        "bf16": 1024,
        "fp8_e4m3": 2048,
        "fp8_e5m2": 2048,
        "int8": 2048,
    },
    # H100 (ml-engineering table, NVIDIA H100 datasheet): 4096 16-bit, TF32 2048, FP8/INT8 8192; FP64 TC 66.9 TFLOPS at 132 SM x 1980 MHz.
    (9, 0): {
        "fp64": 256,
        "fp32": 256,
        "tf32": 2048,
        "fp16": 4096,
        "bf16": 4096,
        "fp8_e4m3": 8192,
        "fp8_e5m2": 8192,
        "int8": 8192,
    },
    # B200: 148 SM, 1.86 GHz tensor clock -> 2.25 PF bf16, 4.5 PF fp8/int8, 9 PF fp4, 1.1 PF tf32
    # (ml-engineering MAMF table; hmc-tech.com B200 page).
    (10, 0): {
        "fp32": 256,
        "tf32": 4096,
        "fp16": 8192,
        "bf16": 8192,
        "fp8_e4m3": 16384,
        "fp8_e5m2": 16384,
        "int8": 16384,
        "fp4": 32768,
    },
    # B300: bf16/fp8 theory as B200 (MAMF table); int8, fp64 and fp4 differ and are left out.
    (10, 3): {"fp32": 256, "fp16": 8192, "bf16": 8192, "fp8_e4m3": 16384, "fp8_e5m2": 16384},
    (11, 0): {"fp32": 256},
    # GB20x, fp32-accumulate rates (RTX PRO 5000 Blackwell: 110 SM x 2.62 GHz -> 147.4 fp16, 294.8 fp8,
    # 1180 fp4, 73.7 tf32; hmc-tech.com). Half the fp16-accumulate rate even on the pro part.
    (12, 0): {"fp32": 256, "tf32": 256, "fp16": 512, "bf16": 512, "fp8_e4m3": 1024, "fp8_e5m2": 1024, "fp4": 4096},
    (12, 1): {"fp32": 256, "tf32": 256, "fp16": 512, "bf16": 512, "fp8_e4m3": 1024, "fp8_e5m2": 1024, "fp4": 4096},
}
# GeForce runs these at half rate with fp32 accumulate (the fp32-accumulate columns of NVIDIA's GA102 and AD102
# whitepaper tables); the A40 is full rate (its datasheet: BF16 with FP32 accumulate 149.7 TFLOPS).
GEFORCE_HALVED = {
    (7, 5): ("fp16",),
    (8, 6): ("tf32", "fp16", "bf16"),
    (8, 9): ("tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"),
}

AMD_RATES: dict[str, dict[str, int]] = {
    # MI100 (120 CU x 1502 MHz): 184.6 fp16 / 92.3 bf16 (AMD MI100 spec [unverified numbers]); 11.5 fp64 vector.
    "CDNA1": {"fp64": 64, "fp32": 256, "fp16": 1024, "bf16": 512, "int8": 1024},
    # MI250X (ml-engineering table): 1024 per CU; fp64/fp32 matrix 95.7 TFLOPS at 220 CU x 1700 MHz.
    "CDNA2": {"fp64": 256, "fp32": 256, "fp16": 1024, "bf16": 1024, "int8": 1024},
    # MI300X (ml-engineering table): 2048 per CU, FP8 4096.
    "CDNA3": {
        "fp64": 256,
        "fp32": 256,
        "tf32": 1024,
        "fp16": 2048,
        "bf16": 2048,
        "fp8_e4m3": 4096,
        "fp8_e5m2": 4096,
        "int8": 4096,
    },
    # MI355X (ml-engineering spec table): 2400 MHz x 256 CU x 4096 = 2516.6 TFLOPS bf16. Other rates not known here.
    "CDNA4": {"fp16": 4096, "bf16": 4096},
    # RDNA1/2: 64 lanes x FMA; packed fp16 2x (RX 5600 XT: 36 CU x 1560 MHz x 128 = 7.19 TFLOPS, AMD via
    # tomshardware.com); fp64 1/16.
    "RDNA1": {"fp64": 8, "fp32": 128, "fp16": 256},
    "RDNA2": {"fp64": 8, "fp32": 128, "fp16": 256},
    # RDNA3: fp32 counts dual issue (RX 7900 XTX 96 CU x 2500 MHz -> 61.4 TFLOPS, guru3d.com); WMMA fp16/bf16/int8
    # 512 (122.9 TFLOPS fp16, 245.8 TOPS int4 -> int8 = fp16 rate, hmc-tech.com); fp64 1/32 of single issue.
    "RDNA3": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    "RDNA3.5": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    # RDNA4: RX 9070 XT 64 CU x 2970 MHz -> 48.7 TFLOPS fp32, 779 TOPS int8 sparse (purepc.pl quoting AMD) ->
    # 2048 dense; fp16 doubled over RDNA3 and fp8 at the int8 rate [derived, not a vendor figure].
    "RDNA4": {"fp32": 256, "fp16": 1024, "bf16": 1024, "fp8_e4m3": 2048, "fp8_e5m2": 2048, "int8": 2048},
}
