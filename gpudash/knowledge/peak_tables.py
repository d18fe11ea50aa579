"""Cited peak-rate tables: named parts (vendor datasheet figures) and FLOP per clock per SM/CU per architecture.

Pure data; gpudash/knowledge/peaks.py turns it into Peak figures. Units: TFLOPS (int8 in TOPS) for parts, FLOP per
clock for rates, GB/s for bandwidth. Every figure is DENSE: datasheets that print "with sparsity" figures say the
dense figure is half (NVIDIA's footnote "Shown with sparsity. Specifications are one-half lower without sparsity"),
and only that halving is applied. fp64 and fp32 are the GEMM figures: the tensor/matrix-core figure where the part
has one (H100 "FP64 Tensor Core", MI300X "FP64 Matrix"), else the vector figure. GeForce figures are the fp32
accumulate column (PyTorch GEMMs accumulate in fp32). A figure a datasheet does not print is left out.

`units` and `boost_mhz` are the SM/CU count and the clock the vendor quotes; the part's architecture rates times
these give "spec-derived" figures for precisions the datasheet does not print (peaks.py says which is which).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False)  # identity: a part is one row of the table
class Part:
    label: str
    vendor: str
    pattern: str  # regex, searched in the normalised device name (lower case, punctuation as spaces, "/" kept)
    source: str  # public URL(s) of the datasheet / spec page
    tflops: dict[str, float] = field(default_factory=dict)  # published dense figures
    bandwidth_gbs: float | None = None
    arch: str = ""  # "8.9", "9.0", "RDNA3", ...: the rates row for derived figures
    units: int | None = None  # SMs / CUs as the vendor specifies the part
    boost_mhz: int | None = None  # the clock the vendor's figures use
    geforce: bool = False  # fp32-accumulate tensor math at half rate (GeForce Ampere/Ada/Turing)
    derive: bool = True  # False where the vendor caps the part below its architecture rates (RTX 5090 D)
    group: str = ""  # parts a name can cover together (e.g. "A100": a bare "NVIDIA A100" is any of them)
    note: str = ""


def _fp8(v: float) -> dict[str, float]:
    return {"fp8_e4m3": v, "fp8_e5m2": v}


def _half(**sparse: float) -> dict[str, float]:
    """Datasheet "with sparsity" figures -> dense (one half, per the datasheet's own footnote)."""
    out: dict[str, float] = {}
    for k, v in sparse.items():
        if k == "fp8":
            out.update(_fp8(v / 2))
        else:
            out[k] = v / 2
    return out


# --- NVIDIA datacenter -------------------------------------------------------------------------------------------
_NV = "https://www.nvidia.com/en-us/data-center"
_V100 = f"{_NV}/v100/"
_P100 = f"{_NV}/tesla-p100/"
_T4 = f"{_NV}/tesla-t4/"
_A100 = f"{_NV}/a100/"
_A30 = f"{_NV}/products/a30-gpu/"
_A10 = f"{_NV}/products/a10-gpu/"
_A40 = f"{_NV}/a40/"
_L4 = f"{_NV}/l4/"
_L40 = f"{_NV}/l40/"
_L40S = f"{_NV}/l40s/"
_H100 = f"{_NV}/h100/"
_H200 = f"{_NV}/h200/"
_GH200 = f"{_NV}/grace-hopper-superchip/"
_HGX = f"{_NV}/hgx/"
_DGXB200 = f"{_NV}/dgx-b200/"
_GB200 = f"{_NV}/gb200-nvl72/"
_B300_TABLE = "https://glennklockwood.com/garden/processors/B300"
_JETSON = "https://developer.nvidia.com/embedded/jetson-modules"

_A100_C = {"fp64": 19.5, "fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "int8": 624.0}
# H100 SXM prints 989 / 1979 / 3958 TFLOPS tf32 / 16-bit / fp8+int8 with sparsity; the unrounded dense halves are
# 132 SM x 1830 MHz x 2048 / 4096 / 8192 = 494.7 / 989.4 / 1978.9 (NVIDIA's rounding of these doubled).
_H100_SXM_C = {
    "fp64": 67.0,
    "fp32": 67.0,
    "tf32": 494.7,
    "fp16": 989.4,
    "bf16": 989.4,
    **_fp8(1978.9),
    "int8": 1978.9,
}
_H100_NVL_C = {"fp64": 60.0, "fp32": 60.0, **_half(tf32=835.0, fp16=1671.0, bf16=1671.0, fp8=3341.0, int8=3341.0)}
_BLACKWELL_HGX = {"fp64": 37.0, "fp32": 75.0, "tf32": 1125.0, "fp16": 2250.0, "bf16": 2250.0, **_fp8(4500.0)}

NVIDIA_DATACENTER: tuple[Part, ...] = (
    # Volta / Pascal / Turing
    Part(
        "NVIDIA V100 SXM2",
        "nvidia",
        r"\bv100 sxm2\b",
        _V100,
        {"fp64": 7.8, "fp32": 15.7, "fp16": 125.0},
        900.0,
        group="V100",
    ),
    Part(
        "NVIDIA V100 PCIe",
        "nvidia",
        r"\bv100 pcie\b",
        _V100,
        {"fp64": 7.0, "fp32": 14.0, "fp16": 112.0},
        900.0,
        group="V100",
    ),
    Part(
        "NVIDIA V100S PCIe",
        "nvidia",
        r"\bv100s\b",
        _V100,
        {"fp64": 8.2, "fp32": 16.4, "fp16": 130.0},
        1134.0,
        group="V100",
    ),
    Part(
        "NVIDIA P100 SXM2",
        "nvidia",
        r"\bp100 sxm2\b",
        _P100,
        {"fp64": 5.3, "fp32": 10.6, "fp16": 21.2},
        732.0,
        group="P100",
    ),
    Part(
        "NVIDIA P100 PCIe 16GB",
        "nvidia",
        r"\bp100 pcie 16gb\b",
        _P100,
        {"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
        732.0,
        group="P100",
    ),
    Part(
        "NVIDIA P100 PCIe 12GB",
        "nvidia",
        r"\bp100 pcie 12gb\b",
        _P100,
        {"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
        549.0,
        group="P100",
    ),
    Part(
        "NVIDIA T4", "nvidia", r"(?:^|\s)(?:tesla )?t4(?:\s|$)", _T4, {"fp32": 8.1, "fp16": 65.0, "int8": 130.0}, 320.0
    ),
    # Ampere: compute identical across A100 variants, bandwidth by memory (40GB SXM/PCIe 1555; 80GB PCIe 1935; SXM 2039)
    Part("NVIDIA A100 40GB", "nvidia", r"\ba100\b.*\b40gb\b", _A100, _A100_C, 1555.0, group="A100"),
    Part(
        "NVIDIA A100 80GB PCIe",
        "nvidia",
        r"\ba100\b.*(?:\b80gb\b.*\bpcie\b|\bpcie\b.*\b80gb\b)",
        _A100,
        _A100_C,
        1935.0,
        group="A100",
    ),
    Part("NVIDIA A100 80GB SXM", "nvidia", r"\ba100 sxm4? 80gb\b", _A100, _A100_C, 2039.0, group="A100"),
    Part(
        "NVIDIA A30",
        "nvidia",
        r"\ba30\b",
        _A30,
        {"fp64": 10.3, "fp32": 10.3, **_half(tf32=165.0, fp16=330.0, bf16=330.0, int8=661.0)},
        933.0,
    ),
    Part(
        "NVIDIA A10",
        "nvidia",
        r"\ba10\b",
        _A10,
        {"fp32": 31.2, **_half(tf32=125.0, fp16=250.0, bf16=250.0, int8=500.0)},
        600.0,
    ),
    Part(
        "NVIDIA A40",
        "nvidia",
        r"\ba40\b",
        _A40,
        {"fp32": 37.4, **_half(tf32=149.6, fp16=299.4, bf16=299.4, int8=598.6)},
        696.0,
    ),
    # Ada
    Part(
        "NVIDIA L4",
        "nvidia",
        r"(?:^|\s)l4(?:\s|$)",
        _L4,
        {"fp32": 30.3, **_half(tf32=120.0, fp16=242.0, bf16=242.0, fp8=485.0, int8=485.0)},
        300.0,
    ),
    Part(
        "NVIDIA L40",
        "nvidia",
        r"\bl40\b(?! ?s\b)",
        _L40,
        # the L40 and L40S datasheets print dense and sparse figures side by side: the dense ones are used
        {"fp32": 90.5, "tf32": 90.5, "fp16": 181.05, "bf16": 181.05, **_fp8(362.0), "int8": 362.0},
        864.0,
    ),
    Part(
        "NVIDIA L40S",
        "nvidia",
        r"\bl40 ?s\b",
        _L40S,
        {"fp32": 91.6, "tf32": 183.0, "fp16": 362.05, "bf16": 362.05, **_fp8(733.0), "int8": 733.0},
        864.0,
    ),
    # Hopper
    Part(
        "NVIDIA H100 SXM",
        "nvidia",
        r"\bh100\b(?!.*\b(?:pcie|nvl)\b).*\b(?:hbm3|sxm5?)\b",
        _H100,
        _H100_SXM_C,
        3350.0,
        group="H100",
    ),
    Part(
        "NVIDIA H100 PCIe",
        "nvidia",
        r"\bh100 pcie\b",
        _H100,
        {"fp64": 51.0, "fp32": 51.0, **_half(tf32=756.0, fp16=1513.0, bf16=1513.0, fp8=3026.0, int8=3026.0)},
        2000.0,
        group="H100",
    ),
    Part("NVIDIA H100 NVL", "nvidia", r"\bh100 nvl\b", _H100, _H100_NVL_C, 3900.0, group="H100"),
    Part("NVIDIA H200 SXM", "nvidia", r"\bh200\b(?!.*\bnvl\b)", _H200, _H100_SXM_C, 4800.0, group="H200"),
    Part("NVIDIA H200 NVL", "nvidia", r"\bh200 nvl\b", _H200, _H100_NVL_C, 4800.0, group="H200"),
    Part("NVIDIA GH200 (96GB HBM3)", "nvidia", r"\bgh200\b.*\b96g", _GH200, _H100_SXM_C, 4000.0, group="GH200"),
    Part("NVIDIA GH200 (144GB HBM3e)", "nvidia", r"\bgh200\b.*\b144g", _GH200, _H100_SXM_C, 4900.0, group="GH200"),
    # Blackwell: HGX/DGX B200 and GB200 NVL72 totals divided by their GPU count (8, 72)
    Part(
        "NVIDIA B200",
        "nvidia",
        r"(?:^|\s)b200\b",
        f"{_HGX}; {_DGXB200}",
        {**_BLACKWELL_HGX, "int8": 4500.0, "fp4": 9000.0},
        8000.0,
        note="per GPU: HGX B200 (8 GPUs) totals / 8",
    ),
    Part(
        "NVIDIA GB200",
        "nvidia",
        r"\bgb200\b",
        _GB200,
        {
            "fp64": 40.0,
            "fp32": 80.0,
            "tf32": 1250.0,
            "fp16": 2500.0,
            "bf16": 2500.0,
            **_fp8(5000.0),
            "int8": 5000.0,
            "fp4": 10000.0,
        },
        8000.0,
        note="per GPU: GB200 NVL72 (72 GPUs) totals / 72",
    ),
    Part(
        "NVIDIA B300",
        "nvidia",
        r"(?:^|\s)b300\b",
        f"{_HGX} (per-GPU figures as tabulated at {_B300_TABLE})",
        {"fp64": 1.25, "fp32": 75.0, "tf32": 1125.0, "fp16": 2250.0, "bf16": 2250.0, **_fp8(4500.0)},
        8000.0,
        note="per GPU: HGX B300 (8 GPUs) totals / 8; fp4 and int8 left out (no per-GPU datasheet figure confirmed)",
    ),
    # Jetson Orin: a torch name of "Orin" covers every module (bandwidth and GPU size differ)
    Part(
        "NVIDIA Jetson AGX Orin 64GB",
        "nvidia",
        r"\bagx orin\b.*\b64gb\b",
        _JETSON,
        {},
        204.8,
        "8.7",
        16,
        1300,
        group="Orin",
    ),
    Part(
        "NVIDIA Jetson AGX Orin 32GB",
        "nvidia",
        r"\bagx orin\b.*\b32gb\b",
        _JETSON,
        {},
        204.8,
        "8.7",
        14,
        930,
        group="Orin",
    ),
    Part(
        "NVIDIA Jetson Orin NX 16GB",
        "nvidia",
        r"\borin nx\b.*\b16gb\b",
        _JETSON,
        {},
        102.4,
        "8.7",
        8,
        918,
        group="Orin",
    ),
    Part(
        "NVIDIA Jetson Orin NX 8GB", "nvidia", r"\borin nx\b.*\b8gb\b", _JETSON, {}, 102.4, "8.7", 8, 765, group="Orin"
    ),
    Part(
        "NVIDIA Jetson Orin Nano 8GB",
        "nvidia",
        r"\borin nano\b.*\b8gb\b",
        _JETSON,
        {},
        68.0,
        "8.7",
        8,
        625,
        group="Orin",
    ),
    Part(
        "NVIDIA Jetson Orin Nano 4GB",
        "nvidia",
        r"\borin nano\b.*\b4gb\b",
        _JETSON,
        {},
        34.0,
        "8.7",
        4,
        625,
        group="Orin",
    ),
)

# --- NVIDIA GeForce (last three generations) ---------------------------------------------------------------------
_GA102_WP = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
_ADA_WP = "https://images.nvidia.com/aem-dam/Solutions/Data-Center/l4/nvidia-ada-gpu-architecture-whitepaper-v2.1.pdf"
_RTX30 = "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/"
_RTX40 = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/"
_RTX50 = "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/"
_NOT_LAPTOP = r"(?!.*\b(?:laptop|mobile|max q)\b)"


def _rtx(model: str, variant: str = "") -> str:
    """'4090' -> matches 'GeForce RTX 4090' but not '4090 D', '4090 Ti', '4090 Laptop GPU'; 'ti' not 'Ti SUPER'."""
    tail = rf" {variant}\b(?! ?(?:ti|super)\b)" if variant else r"\b(?! ?(?:ti|super|d)\b)"
    return rf"(?:\brtx ?|/ ?){model}{tail}{_NOT_LAPTOP}"


def _geforce(model: str, variant: str, src: str, cores: int, boost: int, bw: float, cc: str, **kw) -> Part:
    name = " ".join(["NVIDIA GeForce RTX", model] + ["Ti" if w == "ti" else w.upper() for w in variant.split()])
    return Part(
        name, "nvidia", _rtx(model, variant), src, kw.pop("published", {}), bw, cc, cores // 128, boost, True, **kw
    )


NVIDIA_GEFORCE: tuple[Part, ...] = (
    # RTX 30 (GA10x, 128 FP32 lanes per SM). 3090/3080/3070: GA102 whitepaper Appendix A figures.
    _geforce("3090", "ti", _RTX30, 10752, 1860, 1008.0, "8.6"),
    _geforce(
        "3090",
        "",
        f"{_GA102_WP}; {_RTX30}",
        10496,
        1695,
        936.0,
        "8.6",
        published={"fp64": 0.556, "fp32": 35.6, "tf32": 35.6, "fp16": 71.0, "bf16": 71.0, "int8": 284.0},
    ),
    _geforce("3080", "ti", _RTX30, 10240, 1665, 912.0, "8.6"),
    _geforce(
        "3080",
        "",
        f"{_GA102_WP}; {_RTX30}",
        8704,
        1710,
        760.0,
        "8.6",
        published={"fp64": 0.465, "fp32": 29.8, "tf32": 29.8, "fp16": 59.5, "bf16": 59.5, "int8": 238.0},
        note="the 10 GB card; the 12 GB card has 8960 cores and 912 GB/s",
    ),
    _geforce("3070", "ti", _RTX30, 6144, 1770, 608.0, "8.6"),
    _geforce(
        "3070",
        "",
        f"{_GA102_WP}; {_RTX30}",
        5888,
        1725,
        448.0,
        "8.6",
        published={"fp64": 0.317, "fp32": 20.3, "tf32": 20.3, "fp16": 40.6, "bf16": 40.6, "int8": 162.6},
    ),
    _geforce("3060", "ti", _RTX30, 4864, 1665, 448.0, "8.6"),
    _geforce("3060", "", _RTX30, 3584, 1777, 360.0, "8.6", note="the 12 GB card"),
    # RTX 40 (AD10x). 4090: Ada whitepaper Appendix A.
    _geforce(
        "4090",
        "",
        f"{_ADA_WP}; {_RTX40}",
        16384,
        2520,
        1008.0,
        "8.9",
        published={
            "fp64": 1.29,
            "fp32": 82.6,
            "tf32": 82.6,
            "fp16": 165.2,
            "bf16": 165.2,
            **_fp8(330.3),
            "int8": 660.6,
        },
    ),
    _geforce("4090", "d", _RTX40, 14592, 2520, 1008.0, "8.9"),
    _geforce("4080", "super", _RTX40, 10240, 2550, 736.0, "8.9"),
    _geforce("4080", "", _RTX40, 9728, 2505, 716.8, "8.9"),
    _geforce("4070", "ti super", _RTX40, 8448, 2610, 672.0, "8.9"),
    _geforce("4070", "ti", _RTX40, 7680, 2610, 504.0, "8.9"),
    _geforce("4070", "super", _RTX40, 7168, 2475, 504.0, "8.9"),
    _geforce("4070", "", _RTX40, 5888, 2475, 504.0, "8.9"),
    _geforce("4060", "ti", _RTX40, 4352, 2535, 288.0, "8.9"),
    _geforce("4060", "", _RTX40, 3072, 2460, 272.0, "8.9"),
    # RTX 50 (GB20x). The 5090 D's tensor throughput is capped below the 5090's: no tensor figures derived.
    _geforce("5090", "", _RTX50, 21760, 2410, 1792.0, "12.0"),
    _geforce("5090", "d", _RTX50, 21760, 2410, 1792.0, "12.0", derive=False),
    _geforce("5080", "", _RTX50, 10752, 2620, 960.0, "12.0"),
    _geforce("5070", "ti", _RTX50, 8960, 2450, 896.0, "12.0"),
    _geforce("5070", "", _RTX50, 6144, 2510, 672.0, "12.0"),
    _geforce("5060", "ti", _RTX50, 4608, 2570, 448.0, "12.0"),
    _geforce("5060", "", _RTX50, 3840, 2500, 448.0, "12.0"),
)

# --- AMD Instinct --------------------------------------------------------------------------------------------------
_AMD_ACC = "https://www.amd.com/en/products/accelerators/instinct"
_MI100 = f"{_AMD_ACC}/mi100.html"
_MI200 = f"{_AMD_ACC}/mi200"
_MI300 = f"{_AMD_ACC}/mi300"
_MI350 = f"{_AMD_ACC}/mi350"
_PER_GCD = "per GCD: one torch device is one of the card's two GCDs, so AMD's card figures are halved"

AMD_INSTINCT: tuple[Part, ...] = (
    Part(
        "AMD Instinct MI100",
        "amd",
        r"\bmi100\b",
        _MI100,
        {"fp64": 11.5, "fp32": 46.1, "fp16": 184.6, "bf16": 92.3, "int8": 184.6},
        1228.8,
    ),
    Part(
        "AMD Instinct MI210",
        "amd",
        r"\bmi210\b",
        f"{_MI200}/mi210.html",
        {"fp64": 45.3, "fp32": 45.3, "fp16": 181.0, "bf16": 181.0, "int8": 181.0},
        1638.4,
    ),
    Part(
        "AMD Instinct MI250 (one GCD)",
        "amd",
        r"\bmi250\b(?!x)",
        f"{_MI200}/mi250.html",
        {"fp64": 45.25, "fp32": 45.25, "fp16": 181.05, "bf16": 181.05, "int8": 181.05},
        1638.4,
        note=_PER_GCD,
    ),
    Part(
        "AMD Instinct MI250X (one GCD)",
        "amd",
        r"\bmi250x\b",
        f"{_MI200}/mi250x.html",
        {"fp64": 47.85, "fp32": 47.85, "fp16": 191.5, "bf16": 191.5, "int8": 191.5},
        1638.4,
        note=_PER_GCD,
    ),
    Part(
        "AMD Instinct MI300A",
        "amd",
        r"\bmi300a\b",
        f"{_MI300}/mi300a.html",
        {"fp64": 122.6, "fp32": 122.6, "tf32": 490.3, "fp16": 980.6, "bf16": 980.6, **_fp8(1961.2), "int8": 1961.2},
        5300.0,
    ),
    Part(
        "AMD Instinct MI300X",
        "amd",
        r"\bmi300x\b(?! vf\b)",
        f"{_MI300}/mi300x.html",
        {"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, **_fp8(2614.9), "int8": 2614.9},
        5300.0,
    ),
    Part(
        "AMD Instinct MI325X",
        "amd",
        r"\bmi325x\b",
        f"{_MI300}/mi325x.html",
        {"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, **_fp8(2614.9), "int8": 2614.9},
        6000.0,
    ),
    Part(
        "AMD Instinct MI350X",
        "amd",
        r"\bmi350x\b",
        f"{_MI350}/mi350x.html",
        {"fp64": 72.1, "fp32": 144.2, "fp16": 2300.0, "bf16": 2300.0, **_fp8(4600.0), "int8": 4600.0, "fp4": 9200.0},
        8000.0,
    ),
    Part(
        "AMD Instinct MI355X",
        "amd",
        r"\bmi355x\b",
        f"{_MI350}/mi355x.html",
        {"fp64": 78.6, "fp32": 157.3, "fp16": 2500.0, "bf16": 2500.0, **_fp8(5000.0), "int8": 5000.0, "fp4": 10000.0},
        8000.0,
    ),
)

# --- AMD Radeon (last three generations, plus the RDNA1 cards of the pci.ids example) -------------------------------
_RADEON = "https://www.amd.com/en/products/specifications/graphics.html"
_RX5600 = "https://www.tomshardware.com/news/amd-radeon-rx-5600-xt-specs-price-release-date"


def _rx(model: str, variant: str, cus: int, boost: int, bw: float, family: str, **kw) -> Part:
    tail = rf" {variant}\b" if variant else r"\b(?! ?(?:xtx|xt|gre|m|s)\b)"
    name = f"AMD Radeon RX {model}" + (f" {variant.upper()}" if variant else "")
    # pci.ids lists drop the "RX" after a slash: "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]"
    return Part(
        name,
        "amd",
        rf"(?:\brx ?|/ ?){model}{tail}",
        kw.pop("source", _RADEON),
        kw.pop("published", {}),
        bw,
        family,
        cus,
        boost,
        **kw,
    )


AMD_RADEON: tuple[Part, ...] = (
    # RDNA4 (Navi 44/48)
    _rx("9070", "xt", 64, 2970, 640.0, "RDNA4"),
    _rx("9070", "", 56, 2520, 640.0, "RDNA4"),
    _rx("9060", "xt", 32, 3130, 320.0, "RDNA4", note="the 16 GB card; the 8 GB card has the same GPU"),
    # RDNA3 (Navi 31/32/33)
    _rx("7900", "xtx", 96, 2500, 960.0, "RDNA3", published={"fp32": 61.4, "fp16": 122.8}),
    _rx("7900", "xt", 84, 2400, 800.0, "RDNA3"),
    _rx("7900", "gre", 80, 2245, 576.0, "RDNA3"),
    _rx("7800", "xt", 60, 2430, 624.0, "RDNA3"),
    _rx("7700", "xt", 54, 2544, 432.0, "RDNA3"),
    _rx("7600", "xt", 32, 2755, 288.0, "RDNA3"),
    _rx("7600", "", 32, 2655, 288.0, "RDNA3"),
    # RDNA2 (Navi 21/22/23)
    _rx("6950", "xt", 80, 2310, 576.0, "RDNA2"),
    _rx("6900", "xt", 80, 2250, 512.0, "RDNA2"),
    _rx("6800", "xt", 72, 2250, 512.0, "RDNA2"),
    _rx("6800", "", 60, 2105, 512.0, "RDNA2"),
    _rx("6750", "xt", 40, 2600, 432.0, "RDNA2"),
    _rx("6700", "xt", 40, 2581, 384.0, "RDNA2"),
    _rx("6650", "xt", 32, 2635, 280.0, "RDNA2"),
    _rx("6600", "xt", 32, 2589, 256.0, "RDNA2"),
    _rx("6600", "", 28, 2491, 224.0, "RDNA2"),
    # RDNA1 (Navi 10): pci.ids' "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]" covers these
    _rx("5700", "xt", 40, 1905, 448.0, "RDNA1"),
    _rx("5700", "", 36, 1725, 448.0, "RDNA1"),
    _rx("5600", "xt", 36, 1560, 288.0, "RDNA1", source=f"{_RX5600}; {_RADEON}", published={"fp32": 7.19}),
    # Strix Halo: no vendor FLOPS figure; memory is the system's 256-bit LPDDR5X-8000 shared with the CPU
    Part(
        "AMD Radeon 8060S",
        "amd",
        r"\b8060s\b",
        "https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/amd-ryzen-ai-max-plus-395.html",
        {},
        256.0,
        "RDNA3.5",
        40,
        2900,
    ),
)

PARTS: tuple[Part, ...] = NVIDIA_DATACENTER + NVIDIA_GEFORCE + AMD_INSTINCT + AMD_RADEON

# FLOP per clock per SM (NVIDIA) or per CU (AMD), dense; int8 in OP. Each row reproduces the vendor's own figures at
# the vendor's clock (e.g. H100 SXM 132 SM x 1830 MHz x 4096 = 989.4 TFLOPS bf16). fp16 without tensor cores is the
# CUDA guide's per-SM fp16 throughput x 2 (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions).
NV_RATES: dict[tuple[int, int], dict[str, int]] = {
    # P100: 56 SM x 1480 MHz -> 5.3/10.6/21.2 TFLOPS fp64/fp32/fp16 (P100 SXM2 datasheet).
    (6, 0): {"fp64": 64, "fp32": 128, "fp16": 256},
    # GP10x: 128 FP32 lanes/SM; fp64 1/32; fp16 2 results/clk/SM (CUDA guide).
    (6, 1): {"fp64": 8, "fp32": 256, "fp16": 4},
    # GP10B (Jetson TX2): fp16 256 results/clk/SM, twice fp32 (CUDA guide).
    (6, 2): {"fp64": 8, "fp32": 256, "fp16": 512},
    # V100: 80 SM x 1530 MHz -> 7.8/15.7/125 TFLOPS (8 first-gen tensor cores x 64 FMA).
    (7, 0): {"fp64": 64, "fp32": 128, "fp16": 1024},
    (7, 2): {"fp32": 128},
    # TU10x: T4 40 SM x 1590 MHz -> 65 TFLOPS fp16, 130 TOPS int8; fp64 1/32. TU116/117 have no tensor cores: see
    # NV_RATES_NO_TC.
    (7, 5): {"fp64": 4, "fp32": 128, "fp16": 1024, "int8": 2048},
    # A100: 108 SM x 1410 MHz -> 19.5 fp64 TC / 156 tf32 / 312 bf16 / 624 int8.
    (8, 0): {"fp64": 128, "fp32": 128, "tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096},
    # GA10x full rate (A40: 84 SM x 1740 MHz -> 149.7 bf16); GeForce halves tf32/16-bit (GEFORCE_HALVED).
    (8, 6): {"fp64": 4, "fp32": 256, "tf32": 512, "fp16": 1024, "bf16": 1024, "int8": 2048},
    # GA10B (Orin): A100-class tensor cores: Orin Nano 8 SM x 625 MHz x 8192 = 41 TOPS sparse int8 (NVIDIA: 40).
    (8, 7): {"fp32": 256, "tf32": 1024, "fp16": 2048, "bf16": 2048, "int8": 4096},
    # AD10x full rate (L4: 58 SM x 2040 MHz -> 121 TFLOPS bf16); GeForce halves (RTX 4090 whitepaper row).
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
    # H100 SXM: 132 SM x 1830 MHz -> 494.7 tf32 / 989.4 bf16 / 1979 fp8, int8; fp64 TC 67 at 1980 MHz.
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
    # B200: 148 SM at 1.86 GHz -> 1.1 PF tf32, 2.25 PF bf16, 4.5 PF fp8/int8, 9 PF fp4 (HGX B200 per GPU).
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
    # B300: bf16/fp8 as B200 (HGX B300 per GPU); int8 and fp4 left out.
    (10, 3): {"fp32": 256, "tf32": 4096, "fp16": 8192, "bf16": 8192, "fp8_e4m3": 16384, "fp8_e5m2": 16384},
    # GB20x, fp32-accumulate rates (RTX 5090: 170 SM x 2410 MHz x 4096 = 1678 dense fp4 = NVIDIA's 3352 sparse
    # AI TOPS / 2); 16-bit and fp8 at half the fp16-accumulate rate.
    (12, 0): {"fp32": 256, "tf32": 256, "fp16": 512, "bf16": 512, "fp8_e4m3": 1024, "fp8_e5m2": 1024, "fp4": 4096},
    (12, 1): {"fp32": 256, "tf32": 256, "fp16": 512, "bf16": 512, "fp8_e4m3": 1024, "fp8_e5m2": 1024, "fp4": 4096},
}
# TU116/TU117: no tensor cores; fp16 on dedicated FP16 units at 2x fp32 (GTX 1660 Ti: 24 SM x 1770 MHz x 256 = 10.9
# TFLOPS fp16), int8 via dp4a (emulated level: no peak).
NV_RATES_NO_TC: dict[str, int] = {"fp64": 4, "fp32": 128, "fp16": 256}

# GeForce runs these at half rate with fp32 accumulate (GA102/Ada whitepapers; RTX A6000/A40/L40S are full rate).
GEFORCE_HALVED = {
    (7, 5): ("fp16",),
    (8, 6): ("tf32", "fp16", "bf16"),
    (8, 9): ("tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"),
}

AMD_RATES: dict[str, dict[str, int]] = {
    # GCN/Vega: 64 lanes x FMA per CU; packed fp16 2x from GFX9 (RX Vega 64: 64 CU x 1546 MHz x 128 = 12.7 TFLOPS).
    "GCN3": {"fp32": 128, "fp16": 128},
    "GCN4": {"fp32": 128, "fp16": 128},
    "GCN3/GCN4": {"fp32": 128, "fp16": 128},
    "GCN5": {"fp32": 128, "fp16": 256},
    # MI50: 60 CU x 1725 MHz -> 6.6 fp64 / 13.3 fp32 / 26.5 fp16 TFLOPS (fp64 half rate).
    "GCN5.1": {"fp64": 64, "fp32": 128, "fp16": 256},
    # MI100 (120 CU x 1502 MHz): 11.5 fp64, 46.1 fp32 matrix, 184.6 fp16, 92.3 bf16, 184.6 int8.
    "CDNA1": {"fp64": 64, "fp32": 256, "fp16": 1024, "bf16": 512, "int8": 1024},
    # MI250X: 220 CU x 1700 MHz -> 95.7 fp64/fp32 matrix, 383 fp16/bf16/int8.
    "CDNA2": {"fp64": 256, "fp32": 256, "fp16": 1024, "bf16": 1024, "int8": 1024},
    # MI300X: 304 CU x 2100 MHz -> 163.4 fp64/fp32, 653.7 tf32, 1307.4 bf16, 2614.9 fp8/int8.
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
    # MI355X: 256 CU x 2400 MHz -> 2.5 PF fp16/bf16, 5.0 PF fp8/int8, 10 PF fp4, 157.3 fp32, 78.6 fp64.
    "CDNA4": {
        "fp64": 128,
        "fp32": 256,
        "fp16": 4096,
        "bf16": 4096,
        "fp8_e4m3": 8192,
        "fp8_e5m2": 8192,
        "int8": 8192,
        "fp4": 16384,
    },
    # RDNA1/2: 64 lanes x FMA per CU; packed fp16 2x (RX 5600 XT: 36 CU x 1560 MHz x 128 = 7.19 TFLOPS); fp64 1/16.
    "RDNA1": {"fp64": 8, "fp32": 128, "fp16": 256},
    "RDNA2": {"fp64": 8, "fp32": 128, "fp16": 256},
    # RDNA3: fp32 counts dual issue (RX 7900 XTX: 96 CU x 2500 MHz x 256 = 61.4 TFLOPS, AMD); WMMA fp16/bf16/int8 at
    # 512 (122.8 TFLOPS fp16 on the same card, AMD); fp64 1/32 of the dual-issue fp32 rate.
    "RDNA3": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    "RDNA3.5": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    # RDNA4: RX 9070 XT 64 CU x 2970 MHz -> 48.7 TFLOPS fp32; WMMA 389 TFLOPS fp16 and 779 TOPS fp8/int8 with
    # sparsity (AMD) -> dense 1024 and 2048 per CU per clock.
    "RDNA4": {"fp32": 256, "fp16": 1024, "bf16": 1024, "fp8_e4m3": 2048, "fp8_e5m2": 2048, "int8": 2048},
}
