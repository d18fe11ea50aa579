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
# Every figure below was re-checked against public material; docs/peak-sources.md lists, per part and figure, the
# page that holds it and where it was confirmed. Figures nobody could confirm were removed, not kept.
_NV = "https://www.nvidia.com/en-us/data-center"
_V100 = f"{_NV}/v100/"
_V100_DS = "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"
_P100 = f"{_NV}/tesla-p100/"
_P100_SXM2 = (
    "https://www.techrival.com/nvidia-volta-tesla-v100-cards-detailed-150w-single-slot-300w-dual-slot-gv100-powered"
    "-pcie-accelerators/ (NVIDIA's Tesla comparison table)"
)
_GCP_GPUS = "https://cloud.google.com/compute/docs/gpus"
_P40_P4 = (
    f"{_NV}/tesla-p40/; https://techwarrant.com/nvidia-announces-tesla-p40-and-p4-accelerators/amp "
    "(NVIDIA's Tesla comparison table at the P40 and P4 launch)"
)
_T4 = f"{_NV}/tesla-t4/"
# Kepler Teslas: NVIDIA's Tesla comparison table at the K80 launch (cores, clocks, memory, TFLOPS) as AnandTech printed
# it (read from its stored copy at www.foruma.anandtech.com) and cnews.cz reproduced it; the per-SMX rates from
# NVIDIA's GK110/GK210 whitepaper.
_KEPLER_WP = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-product-literature/"
    "NVIDIA-Kepler-GK110-GK210-Architecture-Whitepaper.pdf"
)
_TESLA_K = (
    "https://www.anandtech.com/show/8729/nvidia-launches-tesla-k80-gk210-gpu (NVIDIA's Tesla K80/K40/K20X/K20 table); "
    "https://cnews.cz/clanky/nvidia-uvadi-nove-gpu-generace-kepler-gk210-bezi-v-dualni-karte-tesla-k80/; "
    f"{_KEPLER_WP} (the per-SMX rates)"
)
_K20 = (
    "http://www.tekspecz.com/tekspecz/2012/11/12/the-telsa-k20x-accelerator-graphic-card-launched-by-nvidia "
    "(NVIDIA's K20X/K20 launch figures); https://tecnogaming.com/se-revelan-especificaciones-de-nvidia-tesla-k20"
)
_GB10 = (
    "https://www.nvidia.com/en-us/products/workstations/dgx-spark/; https://meterpreter.org/a-supercomputer-on-your-"
    "desk-nvidia-unveils-the-dgx-spark-ai-superchip (NVIDIA's GB10 figures at Hot Chips 2025); "
    "https://ai-infrastructure.net/dgx-spark/ (the product page's 273 GB/s)"
)
_A100_DS = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
)
_A30 = f"{_NV}/products/a30-gpu/"
_A10 = f"{_NV}/products/a10-gpu/"
_A40_DS = "https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf"
_L4 = f"{_NV}/l4/"
_L40 = f"{_NV}/l40/"
_L40S = f"{_NV}/l40s/"
_L40_TABLE = "https://www.mullet.se/product.html?product_id=355414 (NVIDIA's L40/L40S table)"
_H100 = f"{_NV}/h100/"
_H100_WP = "https://resources.nvidia.com/en-us-hopper-architecture/nvidia-h100-tensor-c"
_H200 = f"{_NV}/h200/"
_GH200_DS = "https://nvdam.widen.net/s/rrgqqnpbz8/grace-datasheet-gh200-grace-hopper-superchip-3773000"
_BLACKWELL_DS = "https://nvdam.widen.net/s/wwnsxrhm2w/blackwell-datasheet-3384703"
_HGX = f"{_NV}/hgx/"
_B300_TABLE = "https://glennklockwood.com/garden/processors/B300"
_JETSON = "https://developer.nvidia.com/embedded/jetson-modules"
_GB300 = f"{_NV}/gb300-nvl72/"
_GB300_TABLE = "https://verda.com/blog/gb300-nvl72-architecture"

# A100: the datasheet prints the dense figure and the sparse one side by side; the dense column is used.
_A100_C = {"fp64": 19.5, "fp32": 19.5, "tf32": 156.0, "fp16": 312.0, "bf16": 312.0, "int8": 624.0}
# H100 SXM: the Hopper whitepaper prints the dense figures unrounded (132 SM x 1830 MHz x 2048 / 4096 / 8192 =
# 494.7 / 989.4 / 1978.9); the datasheet prints 989 / 1979 / 3958 with sparsity. fp64/fp32: the datasheet's 67.
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
# H200 SXM: fp32 and the 16-bit/fp8/int8 sparse figures confirmed; its fp64 and tf32 figures were not.
_H200_SXM_C = {"fp32": 67.0, **_half(fp16=1979.0, bf16=1979.0, fp8=3958.0, int8=3958.0)}
# GH200: the datasheet prints "989* | 494" style pairs; its dense column is used as printed.
_GH200_C = {"fp64": 67.0, "fp32": 67.0, "tf32": 494.0, "fp16": 990.0, "bf16": 990.0, **_fp8(1979.0), "int8": 1979.0}

NVIDIA_DATACENTER: tuple[Part, ...] = (
    # Volta / Pascal / Turing
    Part(
        "NVIDIA V100 SXM2",
        "nvidia",
        r"\bv100 sxm2\b",
        f"{_V100}; {_V100_DS}",
        {"fp64": 7.8, "fp32": 15.7, "fp16": 125.0},
        900.0,
        group="V100",
    ),
    Part(
        "NVIDIA V100 PCIe",
        "nvidia",
        r"\bv100 pcie\b",
        f"{_V100}; {_V100_DS}",
        {"fp64": 7.0, "fp32": 14.0, "fp16": 112.0},
        900.0,
        group="V100",
    ),
    Part(
        "NVIDIA V100S PCIe",
        "nvidia",
        r"\bv100s\b",
        f"{_V100}; {_V100_DS}",
        {"fp64": 8.2, "fp32": 16.4, "fp16": 130.0},
        1134.0,
        group="V100",
    ),
    # P100 SXM2: NVIDIA's own comparison table gives fp64/fp32 only; its fp16 and bandwidth were not confirmed.
    Part(
        "NVIDIA P100 SXM2",
        "nvidia",
        r"\bp100 sxm2\b",
        f"{_P100}; {_P100_SXM2}",
        {"fp64": 5.3, "fp32": 10.6},
        None,
        group="P100",
    ),
    Part(
        "NVIDIA P100 PCIe 16GB",
        "nvidia",
        r"\bp100 pcie 16gb\b",
        f"{_P100}; {_GCP_GPUS}",
        {"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
        732.0,
        group="P100",
    ),
    # the 12 GB card: the same compute line of the P100 PCIe datasheet; its 549 GB/s was not confirmed
    Part(
        "NVIDIA P100 PCIe 12GB",
        "nvidia",
        r"\bp100 pcie 12gb\b",
        f"{_P100}; {_GCP_GPUS}",
        {"fp64": 4.7, "fp32": 9.3, "fp16": 18.7},
        None,
        group="P100",
    ),
    # P40 / P4 (GP102 / GP104, cc 6.1): NVIDIA's Tesla table at their launch (CUDA cores / 128 = SMs, boost clock,
    # fp32, bandwidth); the other precisions are derived (GP10x: fp16 at 1/64, fp64 at 1/32; int8 is dp4a only).
    Part("NVIDIA Tesla P40", "nvidia", r"\bp40\b", _P40_P4, {"fp32": 12.0}, 346.0, "6.1", 30, 1531),
    Part("NVIDIA Tesla P4", "nvidia", r"(?:^|\s)(?:tesla )?p4(?:\s|$)", _P40_P4, {"fp32": 5.5}, 192.0, "6.1", 20, 1063),
    # Kepler (GK110 cc 3.5, GK210 cc 3.7): NVIDIA's Tesla table. K20/K20X/K40 figures are at the base clock NVIDIA
    # quotes with them (K40: 15 SMX x 745 MHz x 384 = 4.29 TFLOPS; GPU Boost's 810/875 MHz application clocks are
    # not in them). The K80 is two GK210s on one board and each is its own device: NVIDIA's board figures (8.74 /
    # 2.91 TFLOPS at the 875 MHz boost, 480 GB/s) are halved, as the MI250's are per GCD.
    Part(
        "NVIDIA Tesla K80 (one GPU)",
        "nvidia",
        r"\bk80\b",
        _TESLA_K,
        {"fp64": 1.455, "fp32": 4.37},
        240.0,
        "3.7",
        13,
        875,
        note="per GPU: one device is one of the board's two GK210s, so NVIDIA's board figures are halved",
    ),
    Part("NVIDIA Tesla K40", "nvidia", r"\bk40[a-z]?\b", _TESLA_K, {"fp64": 1.43, "fp32": 4.29}, 288.0, "3.5", 15, 745),
    Part(
        "NVIDIA Tesla K20X",
        "nvidia",
        r"\bk20x[a-z]?\b",
        f"{_TESLA_K}; {_K20}",
        {"fp64": 1.31, "fp32": 3.95},
        250.0,
        "3.5",
        14,
        732,
    ),
    Part(
        "NVIDIA Tesla K20",
        "nvidia",
        r"\bk20(?!x)[a-z]?\b",
        f"{_TESLA_K}; {_K20}",
        {"fp64": 1.17, "fp32": 3.52},
        208.0,
        "3.5",
        13,
        706,
    ),
    # T4: the product page prints "320+ GB/s" (its one-page datasheet says 300 GB/s); the page's figure is used.
    Part(
        "NVIDIA T4", "nvidia", r"(?:^|\s)(?:tesla )?t4(?:\s|$)", _T4, {"fp32": 8.1, "fp16": 65.0, "int8": 130.0}, 320.0
    ),
    # Ampere: compute identical across A100 variants, bandwidth by memory (40GB SXM/PCIe 1555; 80GB PCIe 1935; SXM 2039)
    Part("NVIDIA A100 40GB", "nvidia", r"\ba100\b.*\b40gb\b", _A100_DS, _A100_C, 1555.0, group="A100"),
    Part(
        "NVIDIA A100 80GB PCIe",
        "nvidia",
        r"\ba100\b.*(?:\b80gb\b.*\bpcie\b|\bpcie\b.*\b80gb\b)",
        _A100_DS,
        _A100_C,
        1935.0,
        group="A100",
    ),
    Part("NVIDIA A100 80GB SXM", "nvidia", r"\ba100 sxm4? 80gb\b", _A100_DS, _A100_C, 2039.0, group="A100"),
    # A30: fp16/bf16/int8 as the dense column prints them; tf32 from the sparse 165; its fp64 figure was not confirmed
    Part(
        "NVIDIA A30",
        "nvidia",
        r"\ba30\b",
        _A30,
        {"fp32": 10.3, "fp16": 165.0, "bf16": 165.0, "int8": 330.0, **_half(tf32=165.0)},
        933.0,
    ),
    # A10: its tf32 figure was not confirmed
    Part("NVIDIA A10", "nvidia", r"\ba10\b", _A10, {"fp32": 31.2, **_half(fp16=250.0, bf16=250.0, int8=500.0)}, 600.0),
    # A40: its dense tf32 figure was not confirmed
    Part(
        "NVIDIA A40",
        "nvidia",
        r"\ba40\b",
        _A40_DS,
        {"fp32": 37.4, "fp16": 149.7, "bf16": 149.7, "int8": 299.3},
        696.0,
    ),
    # Ada. L4: tf32 and int8 were not confirmed.
    Part(
        "NVIDIA L4",
        "nvidia",
        r"(?:^|\s)l4(?:\s|$)",
        _L4,
        {"fp32": 30.3, **_half(fp16=242.0, bf16=242.0, fp8=485.0)},
        300.0,
    ),
    Part(
        "NVIDIA L40",
        "nvidia",
        r"\bl40\b(?! ?s\b)",
        f"{_L40}; {_L40_TABLE}",
        # the L40 and L40S datasheets print dense and sparse figures side by side: the dense ones are used
        {"fp32": 90.5, "tf32": 90.5, "fp16": 181.05, "bf16": 181.05, **_fp8(362.0), "int8": 362.0},
        864.0,
    ),
    # L40S: its int8 figure was not confirmed
    Part(
        "NVIDIA L40S",
        "nvidia",
        r"\bl40 ?s\b",
        f"{_L40S}; {_L40_TABLE}",
        {"fp32": 91.6, "tf32": 183.0, "fp16": 362.05, "bf16": 362.05, **_fp8(733.0)},
        864.0,
    ),
    # Hopper
    Part(
        "NVIDIA H100 SXM",
        "nvidia",
        r"\bh100\b(?!.*\b(?:pcie|nvl)\b).*\b(?:hbm3|sxm5?)\b",
        f"{_H100}; {_H100_WP}",
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
    Part("NVIDIA H200 SXM", "nvidia", r"\bh200\b(?!.*\bnvl\b)", _H200, _H200_SXM_C, 4800.0, group="H200"),
    Part("NVIDIA H200 NVL", "nvidia", r"\bh200 nvl\b", _H200, _H100_NVL_C, 4800.0, group="H200"),
    # H20 (China, 96 GB HBM3): NVIDIA's figures as reported at launch; its SM count and clock were never published,
    # so nothing is derived. The later 141 GB "H20-3e" is another part.
    Part(
        "NVIDIA H20",
        "nvidia",
        r"\bh20\b(?! ?3e\b)",
        "https://www.tweaktown.com/news/95224/nvidias-tweaked-h20-ai-gpu-enters-mass-production-in-q2-2024-destined-"
        "for-china/index.html; https://willitrunai.com/es/gpus/h20-96gb",
        {"fp16": 148.0, "int8": 296.0, **_fp8(296.0)},
        4000.0,
        "9.0",
    ),
    Part("NVIDIA GH200 (96GB HBM3)", "nvidia", r"\bgh200\b.*\b96g", _GH200_DS, _GH200_C, 4000.0, group="GH200"),
    Part("NVIDIA GH200 (144GB HBM3e)", "nvidia", r"\bgh200\b.*\b144g", _GH200_DS, _GH200_C, 4900.0, group="GH200"),
    # Blackwell: the datasheet's per-GPU columns (tensor figures printed with sparsity, dense = half; fp4 dense is
    # printed as a total: HGX B200 72 PF / 8, NVL72 720 PF / 72)
    Part(
        "NVIDIA B200",
        "nvidia",
        r"(?:^|\s)b200\b",
        _BLACKWELL_DS,
        {
            "fp64": 37.0,
            "fp32": 75.0,
            **_half(tf32=2200.0, fp16=4500.0, bf16=4500.0, fp8=9000.0, int8=9000.0),
            "fp4": 9000.0,
        },
        7700.0,
        note="per GPU: the datasheet's HGX B200 column (180 GB, 7.7 TB/s; the DGX B200 sheet's 64 TB/s is 8 TB/s)",
    ),
    Part(
        "NVIDIA GB200",
        "nvidia",
        r"\bgb200\b",
        _BLACKWELL_DS,
        {
            "fp64": 40.0,
            "fp32": 80.0,
            **_half(tf32=2500.0, fp16=5000.0, bf16=5000.0, fp8=10000.0, int8=10000.0),
            "fp4": 10000.0,
        },
        8000.0,
        note="per GPU: the datasheet's GB200 NVL72 column",
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
    # GB300: NVIDIA publishes rack totals (GB300 NVL72: 1,080 PF dense fp4, 720 PF sparse fp8, 576 TB/s) for 72
    # GPUs; these are the per-GPU dense figures. Its fp32, fp64 and int8 figures were not confirmed.
    Part(
        "NVIDIA GB300",
        "nvidia",
        r"\bgb300\b",
        f"{_GB300} (per-GPU figures as tabulated at {_GB300_TABLE})",
        {"tf32": 1250.0, "fp16": 2500.0, "bf16": 2500.0, **_fp8(5000.0), "fp4": 15000.0},
        8000.0,
        note="per GPU: the GB300 NVL72 rack figures / 72",
    ),
    # Jetson Orin: a torch name of "Orin" covers every module. The Orin NX and Orin Nano GPU clocks depend on the
    # power mode (JetPack 6.2's "Super" modes raise them, and the Orin Nano's memory clock too), so those rows carry
    # no SM count and clock; the AGX Orin 64GB's 2048 cores (16 SMs) at 1.3 GHz are one figure.
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
    Part("NVIDIA Jetson AGX Orin 32GB", "nvidia", r"\bagx orin\b.*\b32gb\b", _JETSON, {}, 204.8, group="Orin"),
    Part("NVIDIA Jetson Orin NX 16GB", "nvidia", r"\borin nx\b.*\b16gb\b", _JETSON, {}, 102.4, group="Orin"),
    Part("NVIDIA Jetson Orin NX 8GB", "nvidia", r"\borin nx\b.*\b8gb\b", _JETSON, {}, 102.4, group="Orin"),
    # GB10 (DGX Spark, cc 12.1): NVIDIA publishes "1 petaFLOP FP4 with sparsity" (dense: half), "about 31 TFLOPS"
    # fp32 and 273 GB/s of LPDDR5X; 6,144 CUDA cores (48 SMs) but no GPU clock, so nothing is derived: bf16, fp8
    # and the rest come from the device's own SM count and clock (estimated).
    Part("NVIDIA GB10", "nvidia", r"\bgb10\b", _GB10, {"fp32": 31.0, **_half(fp4=1000.0)}, 273.0, "12.1"),
)

# --- NVIDIA GeForce (the last four generations, and GTX 16) -----------------------------------------------------
_GA102_WP = "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
_ADA_WP = "https://images.nvidia.com/aem-dam/Solutions/Data-Center/l4/nvidia-ada-gpu-architecture-whitepaper-v2.1.pdf"
_RTX30 = "https://www.nvidia.com/en-us/geforce/graphics-cards/30-series/"
_RTX30_NEWS = "https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official"
_RTX40 = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/"
_RTX50 = "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/"
_RTX50_NEWS = (
    "https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-"
    "upgrade-today/index.html"
)
_RTX_COMPARE = "GitHub text, search-index id 56305463472 (NVIDIA's GeForce compare table)"
_RTX5050 = "https://tweakers.net/nieuws/236558/nvidia-kondigt-rtx-5050-videokaart-met-8gb-gddr6-geheugen-aan-voor-259-euro.html"
_RTX60_NEWS = "https://prepmusiclog.com/nvidia-rtx-5060-5060-ti-review-you-can-have-affordable-or-future-proof-pick-one"
MOBILE_WORDS = r"\b(?:laptop|mobile|max q)\b"  # words of a laptop part's name (normalised)
_NOT_LAPTOP = rf"(?!.*{MOBILE_WORDS})"
_RTX3090TI = (
    "https://www.tweaktown.com/news/84164/nvidia-geforce-rtx-3090-ti-full-specs-price-performance-details/index.html"
)
_RTX3060 = "https://techtaks.com/geforce-rtx-3060-nvidia-finally-details-the-specifications/"
_RTX40_SUPER = (
    "https://www.svethardware.cz/nvidia-geforce-rtx-4000-super-prichazi-vice-jader-vice-pameti-nebo-nizsi-cena/60300"
)
_RTX4070TI = "https://www.sweclockers.com/nyhet/35472-nvidia-avtacker-geforce-rtx-4070-ti-nytt-namn-och-lagre-pris"
_RTX4070_LAUNCH = (
    "https://www.zive.cz/clanky/prichazi-nejlevnejsi-a-nejuspornejsi-grafika-rady-ada-geforce-rtx-4070-je-optimalni-"
    "pro-hrani-v-1440p/sc-3-a-221695/default.aspx"
)


_TURING_REF = (
    "https://www.bit-tech.net/features/tech/graphics/nvidias-turing-architecture-explained/1/ (NVIDIA's reference "
    "specifications from the Turing whitepaper)"
)
_RTX20_MEM = "https://www.enfasys.net/2018/08/21/nvidia-lanza-las-geforce-rtx-2000/ (NVIDIA's launch: 616 and 448 GB/s)"
_RTX2060 = (
    "https://pcmasters.de/news/133710774-nvidia-geforce-rtx-2060-fuer-369eur-vorgestellt.html; "
    "https://fudzilla.com/news/graphics/47888-nvidia-announces-the-geforce-rtx-2060"
)
_GTX16 = "https://www.guru3d.com/review/gigabyte-gtx-1660-super-gaming-oc-review/page-5/ (NVIDIA's GeForce 16 table)"


def _gtx16(variant: str, src: str, sms: int, boost: int, bw: float) -> Part:
    """GTX 1660 / Ti / SUPER (TU116): no tensor cores, so no GeForce tensor halving (geforce=False); the fp16 units
    run at twice the fp32 rate (NV_RATES_NO_TC)."""
    tail = rf" {variant}\b" if variant else r"\b(?! ?(?:ti|super)\b)"
    name = "NVIDIA GeForce GTX 1660" + (f" {'Ti' if variant == 'ti' else variant.upper()}" if variant else "")
    return Part(name, "nvidia", rf"\bgtx ?1660{tail}{_NOT_LAPTOP}", src, {}, bw, "7.5", sms, boost)


def _rtx(model: str, variant: str = "") -> str:
    """'4090' -> matches 'GeForce RTX 4090' but not '4090 D', '4090 Ti', '4090 Laptop GPU'; 'ti' not 'Ti SUPER';
    'd' not 'D V2' (the RTX 5090 D V2 has a narrower memory bus than the 5090 D)."""
    tail = rf" {variant}\b(?! ?(?:ti|super|v2)\b)" if variant else r"\b(?! ?(?:ti|super|d)\b)"
    return rf"(?:\brtx ?|/ ?){model}{tail}{_NOT_LAPTOP}"


def _geforce(
    model: str, variant: str, src: str, sms: int | None, boost: int | None, bw: float | None, cc: str, **kw
) -> Part:
    name = " ".join(["NVIDIA GeForce RTX", model] + ["Ti" if w == "ti" else w.upper() for w in variant.split()])
    return Part(name, "nvidia", _rtx(model, variant), src, kw.pop("published", {}), bw, cc, sms, boost, True, **kw)


# Rows only for cards whose figures were confirmed (docs/peak-sources.md); the SM count is CUDA cores / 128.
NVIDIA_GEFORCE: tuple[Part, ...] = (
    # RTX 20 (TU10x, cc 7.5): NVIDIA's reference boost clocks (Founders Editions ran 90 MHz higher); 64 CUDA cores
    # per SM. 2080 Ti: 68 SM x 1545 MHz x 128 = 13.4 TFLOPS fp32, NVIDIA's reference figure.
    _geforce("2080", "ti", f"{_TURING_REF}; {_RTX20_MEM}", 68, 1545, 616.0, "7.5"),
    _geforce("2080", "", f"{_TURING_REF}; {_RTX20_MEM}", 46, 1710, 448.0, "7.5"),
    _geforce("2070", "", f"{_TURING_REF}; {_RTX20_MEM}", 36, 1620, 448.0, "7.5"),
    # 2060: the 6 GB launch card (30 SMs, 14 Gbps on 192 bits); the later RTX 2060 12GB has 34 SMs: not this row
    Part(
        "NVIDIA GeForce RTX 2060",
        "nvidia",
        rf"(?:\brtx ?|/ ?)2060\b(?! ?(?:ti|super|d|12 ?gb)\b){_NOT_LAPTOP}",
        _RTX2060,
        {},
        336.0,
        "7.5",
        30,
        1680,
        True,
    ),
    # GTX 16 (TU116): CUDA cores / 64 = SMs; memory 8 / 12 / 14 Gbps on 192 bits
    _gtx16(
        "",
        f"{_GTX16}; https://www.news18.com/news/tech/nvidia-announces-geforce-gtx-1660-mid-range-graphics-for-"
        "desktops-2067069.html",
        22,
        1785,
        192.0,
    ),
    _gtx16(
        "ti",
        f"{_GTX16}; https://tech4d.it/2019/02/nvidia-presenta-gtx-1660-ti-lerede-della-1060-con-6-gb-gddr6",
        24,
        1770,
        288.0,
    ),
    _gtx16("super", _GTX16, 22, 1785, 336.0),
    # RTX 30 (GA10x). 3090: GA102 whitepaper Appendix A (1695 MHz, 936 GB/s, 35.6 fp32, 71 fp16 tensor fp32-acc).
    _geforce("3090", "", f"{_GA102_WP}; {_RTX30}", 82, 1695, 936.0, "8.6", published={"fp32": 35.6, "fp16": 71.0}),
    _geforce("3080", "", f"{_RTX30}; {_RTX30_NEWS}", 68, 1710, 760.0, "8.6", published={"fp32": 29.8}),
    _geforce("3090", "ti", f"{_RTX30}; {_RTX3090TI}", 84, 1860, 1008.0, "8.6"),
    # 3070: NVIDIA's launch figure said 16 Gbps memory, shipping cards run 14 Gbps: no bandwidth kept
    _geforce("3070", "", f"{_RTX30}; {_RTX30_NEWS}", 46, 1730, None, "8.6"),
    # 3060 Ti / 3060: NVIDIA's 1.67 / 1.78 GHz. No bandwidth: a GDDR6X 3060 Ti (608 GB/s) and an 8 GB 128-bit 3060
    # (240 GB/s) carry the same names as the launch cards.
    _geforce("3060", "ti", f"{_RTX30}; {_RTX3060}", 38, 1670, None, "8.6"),
    _geforce(
        "3060",
        "",
        f"{_RTX30}; {_RTX3060}; https://issuhub.com/view/index/32366?pageIndex=31 (PCWorld on NVIDIA's product page)",
        28,
        1780,
        None,
        "8.6",
    ),
    # 3080 Ti / 3070 Ti: NVIDIA's 1.67 / 1.77 GHz from its spec table. 3080 Ti: 12 GB GDDR6X on 384 bits confirmed,
    # its memory speed only in pre-launch reports, so no bandwidth.
    _geforce(
        "3080",
        "ti",
        f"{_RTX30}; {_RTX_COMPARE}",
        80,
        1670,
        None,
        "8.6",
    ),
    # 3050: NVIDIA's table lists an 8 GB card (2560 cores, 1.78 GHz, 128-bit) and a 6 GB card (2304 cores,
    # 1.47 GHz, 96-bit) under one name; a name without the size is either, so it matches both (ambiguous).
    _geforce("3050", "8gb", f"{_RTX30}; {_RTX_COMPARE}", 20, 1780, None, "8.6", group="RTX 3050"),
    _geforce("3050", "6gb", f"{_RTX30}; {_RTX_COMPARE}", 18, 1470, None, "8.6", group="RTX 3050"),
    _geforce(
        "3070",
        "ti",
        f"{_RTX30}; {_RTX_COMPARE}",
        48,
        1770,
        608.0,
        "8.6",
    ),
    # RTX 40 (AD10x). 4090: Ada whitepaper Appendix A.
    _geforce(
        "4090",
        "",
        f"{_ADA_WP}; {_RTX40}",
        128,
        2520,
        1008.0,
        "8.9",
        published={"fp32": 82.6, "fp16": 165.2, "bf16": 165.2, **_fp8(330.3), "int8": 660.6},
    ),
    # 4090 D: 14592 cores and 21 Gbps x 384-bit memory confirmed; its boost clock was not
    _geforce(
        "4090",
        "d",
        f"{_RTX40}; https://smartphonemagazine.nl/nn/2024/07/11/nvidia-presenterer-nye-geforce-rtx-4090-d-modell",
        None,
        None,
        1008.0,
        "8.9",
    ),
    _geforce("4080", "super", f"{_RTX40}; {_RTX40_SUPER}", 80, 2550, 736.0, "8.9"),
    # 4080: the launch reports give 22.4, 22.5 and 23 Gbps memory (717, 720 and 736 GB/s): no bandwidth kept
    _geforce("4080", "", f"{_RTX40}; {_RTX4070_LAUNCH}; {_RTX40_SUPER}", 76, 2505, None, "8.9"),
    _geforce("4070", "ti super", f"{_RTX40}; {_RTX40_SUPER}", 66, 2610, 672.0, "8.9"),
    # 4070 Ti: the card NVIDIA first announced as the RTX 4080 12GB
    _geforce("4070", "ti", f"{_RTX40}; {_RTX4070TI}; {_RTX4070_LAUNCH}", 60, 2610, 504.0, "8.9"),
    _geforce(
        "4070",
        "super",
        f"{_RTX40}; https://www.cnews.cz/clanky/nvidia-uvadi-upgrade-grafik-ada-lovelace-geforce-rtx-4070-super-4070-"
        "ti-super-a-4080-super/",
        56,
        2475,
        504.0,
        "8.9",
    ),
    _geforce(
        "4070",
        "",
        f"{_RTX40}; https://www.thefpsreview.com/gpu-family/nvidia-geforce-rtx-4070-gpu-family-specifications",
        46,
        2475,
        504.0,
        "8.9",
    ),
    _geforce("4060", "ti", f"{_RTX40}; {_RTX60_NEWS}", 34, 2535, 288.0, "8.9"),
    _geforce("4060", "", f"{_RTX40}; {_RTX60_NEWS}", 24, 2460, 272.0, "8.9"),
    # RTX 50 (GB20x). The 5090 D's tensor throughput is capped below the 5090's (2375 vs 3352 AI TOPS): no tensor
    # figures derived.
    _geforce("5090", "", f"{_RTX50}; {_RTX50_NEWS}", 170, 2410, 1792.0, "12.0"),
    _geforce(
        "5090",
        "d",
        f"{_RTX50}; https://www.tomshardware.com/pc-components/gpus/nvidia-rtx-5090d-v2-limits-ai-performance-even-"
        "more-with-25-percent-less-vram-and-bandwidth-downgraded-gaming-flagship-keeps-same-usd2299-msrp-in-china",
        170,
        2410,
        1792.0,
        "12.0",
        derive=False,
    ),
    _geforce("5080", "", f"{_RTX50}; {_RTX50_NEWS}", 84, 2620, 960.0, "12.0"),
    _geforce("5070", "ti", f"{_RTX50}; {_RTX50_NEWS}", 70, 2450, 896.0, "12.0"),
    _geforce("5070", "", f"{_RTX50}; {_RTX50_NEWS}", 48, 2510, None, "12.0"),
    _geforce("5060", "ti", f"{_RTX50}; {_RTX60_NEWS}", 36, 2570, 448.0, "12.0"),
    _geforce("5060", "", f"{_RTX50}; {_RTX60_NEWS}", 30, 2500, 448.0, "12.0"),
    # 5050 (GB207): 2560 CUDA cores, 2.57 GHz boost, 8 GB GDDR6 at 20 Gbps on 128 bits, as NVIDIA announced it.
    _geforce("5050", "", f"{_RTX50}; {_RTX5050}", 20, 2570, 320.0, "12.0"),
)

# --- NVIDIA RTX workstation ---------------------------------------------------------------------------------------
# The datasheets print an fp32 figure, the memory bandwidth and one "Tensor performance" figure with sparsity; no
# clock, so nothing is derived. Pro cards run tensor math at the full rate (no GeForce halving). Laptop variants
# ("RTX A4000 Laptop GPU") are other products.
_RTX_A6000 = "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/"
_RTX_A4000 = "https://www.nvidia.com/en-us/design-visualization/rtx-a4000/"
_RTX_6000_ADA_DS = (
    "https://www.nvidia.com/content/dam/en-zz/Solutions/design-visualization/rtx-6000/"
    "proviz-print-rtx6000-datasheet-web-2504660.pdf"
)

# Turing Quadro RTX: "Tensor Performance" is fp16 matrix math with fp16 or fp32 accumulate at the full rate, dense
# (Turing has no sparsity); the 6000 and 8000 share their compute and differ in memory size only.
_QUADRO_6000 = (
    "https://www.nvidia.com/en-us/design-visualization/quadro/rtx-6000/; GitHub text, search-index id 14395848610 "
    "(NVIDIA's Quadro RTX 6000 figures); https://chip.pl/2018/10/bestia-dla-profesjonalistow-quadro-rtx-6000"
)
_QUADRO_8000 = (
    "https://www.nvidia.com/en-us/design-visualization/quadro/rtx-8000/; https://maychudoanhnghiep.vn/leadtek-nvidia-"
    "quadro-rtx8000-turing-gpu4608-cuda-cores48gb-gddr64xdp.html (the datasheet table)"
)
_QUADRO_5000 = (
    "https://www.nvidia.com/en-us/design-visualization/quadro/rtx-5000/; https://networking-equipments.sell.everychina."
    "com/p-117599392-nvidia-quadro-rtx-5000-16g-video-card-the-ultimate-graphics-upgrade-for-professionals.html "
    "(the datasheet table)"
)
_QUADRO_4000 = (
    "https://www.nvidia.com/en-us/design-visualization/quadro/rtx-4000/; GitHub text, search-index id 12394316220 "
    "(the datasheet table); https://bto-pc-fan.com/2018/11/14/post-2927"
)


def _quadro(model: str, src: str, fp32: float, tensor: float, bw: float) -> Part:
    name = f"NVIDIA Quadro RTX {model}"
    return Part(name, "nvidia", rf"\bquadro rtx {model}\b{_NOT_LAPTOP}", src, {"fp32": fp32, "fp16": tensor}, bw, "7.5")


NVIDIA_WORKSTATION: tuple[Part, ...] = (
    _quadro("8000", _QUADRO_8000, 16.3, 130.5, 672.0),
    _quadro("6000", _QUADRO_6000, 16.3, 130.5, 672.0),
    _quadro("5000", _QUADRO_5000, 11.2, 89.2, 448.0),
    _quadro("4000", _QUADRO_4000, 7.1, 57.0, 416.0),
    Part(
        "NVIDIA RTX A6000",
        "nvidia",
        rf"\brtx a6000\b{_NOT_LAPTOP}",
        f"{_RTX_A6000}; https://servethehome.com/nvidia-rtx-a6000-48gb-gpu-drops-quadro-designation",
        {"fp32": 38.7},
        768.0,
        "8.6",
    ),
    Part(
        "NVIDIA RTX A4000",
        "nvidia",
        rf"\brtx a4000\b{_NOT_LAPTOP}",
        f"{_RTX_A4000}; https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-"
        "graphics-card-for-professional-video-editing.html (NVIDIA's datasheet table)",
        {"fp32": 19.2},
        448.0,
        "8.6",
    ),
    # RTX PRO 6000 Blackwell: one row for its Workstation, Max-Q Workstation and Server editions, which share the
    # chip's 188 SMs and 96 GB of 28 Gbps GDDR7 on 512 bits but not their clocks (not published per edition).
    Part(
        "NVIDIA RTX PRO 6000 Blackwell",
        "nvidia",
        r"\brtx pro 6000 blackwell\b(?!.*\blaptop\b)",
        "https://www.nvidia.com/en-us/products/workstations/professional-desktop-gpus/rtx-pro-6000/; "
        "https://gpu.name/posts/nvidia-unveils-rtx-pro-6000-blackwell-gpu-with-24-064-cores-and-96gb-memory",
        {},
        1792.0,
        "12.0",
        188,
        None,
        note="the editions' clocks differ and were not published: no figure is derived",
    ),
    # RTX 6000 Ada: the datasheet's 1457.0 TFLOPS is "effective FP8 ... using the new sparsity feature"
    Part(
        "NVIDIA RTX 6000 Ada Generation",
        "nvidia",
        rf"\brtx 6000 ada\b{_NOT_LAPTOP}",
        _RTX_6000_ADA_DS,
        {"fp32": 91.1, **_half(fp8=1457.0)},
        960.0,
        "8.9",
    ),
)

# --- AMD Instinct --------------------------------------------------------------------------------------------------
_AMD_ACC = "https://www.amd.com/en/products/accelerators/instinct"
_ROCM_ARCH = "https://rocm.docs.amd.com/en/latest/conceptual/gpu-arch"
_MI200 = f"{_AMD_ACC}/mi200"
_MI300 = f"{_AMD_ACC}/mi300"
_MI350 = f"{_AMD_ACC}/mi350"
_PER_GCD = "per GCD: one torch device is one of the card's two GCDs, so AMD's card figures are halved"
_ROCM_SPECS = "https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html"
_MI50_MI60 = (
    "AMD's MI50/MI60 launch release of 6 Nov 2018 as quoted at "
    "https://skyne98.github.io/wiki-gfx906/studies/2026-02-21/mi50-mi60-architecture-baseline.html"
)

AMD_INSTINCT: tuple[Part, ...] = (
    # MI50 / MI60 (gfx906): AMD's launch figures; "up to 1 TB/s" HBM2. The MI50 launched as a 16 GB card; ROCm also
    # lists an MI50 32GB whose figures were not confirmed, so a name that says 32GB is not this row.
    Part(
        "AMD Radeon Instinct MI50",
        "amd",
        r"\bmi50\b(?!.*\b32 ?gb\b)",
        _MI50_MI60,
        {"fp64": 6.7, "fp32": 13.4, "fp16": 26.8},
        1000.0,
    ),
    Part(
        "AMD Radeon Instinct MI60",
        "amd",
        r"\bmi60\b",
        _MI50_MI60,
        {"fp64": 7.4, "fp32": 14.8, "fp16": 29.5},
        1000.0,
    ),
    # MI100: ROCm's MI100 page (fp32 = the matrix figure); its int8 figure was not confirmed
    Part(
        "AMD Instinct MI100",
        "amd",
        r"\bmi100\b",
        f"{_ROCM_ARCH}/mi100.html",
        {"fp64": 11.5, "fp32": 46.1, "fp16": 184.6, "bf16": 92.3},
        1228.0,
    ),
    Part(
        "AMD Instinct MI210",
        "amd",
        r"\bmi210\b",
        f"{_MI200}/mi210.html",
        {"fp64": 45.3, "fp32": 45.3, "fp16": 181.0, "bf16": 181.0, "int8": 181.0},
        1638.4,
    ),
    # MI250: ROCm's MI250 page prints the OAM's figures (90.5 fp64/fp32 matrix, 362.1 fp16/bf16/int8, 3.2 TB/s)
    Part(
        "AMD Instinct MI250 (one GCD)",
        "amd",
        r"\bmi250\b(?!x)",
        f"{_ROCM_ARCH}/mi250.html",
        {"fp64": 45.25, "fp32": 45.25, "fp16": 181.05, "bf16": 181.05, "int8": 181.05},
        1638.4,
        note=_PER_GCD,
    ),
    # MI250X: 383.0 fp16/bf16 for the module at 1,700 MHz, 3.2768 TB/s (AMD's footnotes); fp64/fp32/int8 not confirmed
    Part(
        "AMD Instinct MI250X (one GCD)",
        "amd",
        r"\bmi250x\b",
        f"{_MI200}/mi250x.html",
        {"fp16": 191.5, "bf16": 191.5},
        1638.4,
        note=_PER_GCD,
    ),
    # MI300A: fp64 matrix and fp16/bf16 confirmed; its fp32, tf32, fp8 and int8 figures were not
    Part(
        "AMD Instinct MI300A",
        "amd",
        r"\bmi300a\b",
        f"{_MI300}/mi300a.html",
        {"fp64": 122.6, "fp16": 980.6, "bf16": 980.6},
        5300.0,
    ),
    Part(
        "AMD Instinct MI300X",
        "amd",
        r"\bmi300x\b",  # "MI300X VF" too: one SR-IOV function per GPU (a partition shows by its CU count)
        f"{_MI300}/mi300x.html; {_ROCM_ARCH}/mi300.html",
        {"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, **_fp8(2614.9), "int8": 2614.9},
        5300.0,
        units=304,  # ROCm's MI300 page; a device reporting fewer CUs is a partition (CPX mode, a split VF)
    ),
    # MI325X: fp16/bf16/fp8 (AMD footnote MI325-002) and 6 TB/s confirmed; the rest was not
    Part(
        "AMD Instinct MI325X",
        "amd",
        r"\bmi325x\b",
        f"{_MI300}/mi325x.html",
        {"fp16": 1307.4, "bf16": 1307.4, **_fp8(2614.9)},
        6000.0,
    ),
    # MI350X / MI355X: the product pages' dense figures; int8 was not confirmed
    Part(
        "AMD Instinct MI350X",
        "amd",
        r"\bmi350x\b",
        f"{_MI350}/mi350x.html",
        {"fp64": 72.1, "fp32": 144.2, "fp16": 2300.0, "bf16": 2300.0, **_fp8(4600.0), "fp4": 9200.0},
        8000.0,
    ),
    Part(
        "AMD Instinct MI355X",
        "amd",
        r"\bmi355x\b",
        f"{_MI350}/mi355x.html",
        {"fp64": 78.6, "fp32": 157.3, "fp16": 2500.0, "bf16": 2500.0, **_fp8(5000.0), "fp4": 10100.0},
        8000.0,
    ),
)

# --- AMD Radeon (last three generations, plus the RDNA1 cards of the pci.ids example) -------------------------------
_RADEON = "https://www.amd.com/en/products/specifications/graphics.html"
_RX6X50 = (
    "https://www.kitguru.net/components/graphic-cards/matthew-wilson/asus-sapphire-and-powercolor-announce-custom-"
    "rx-6950-xt-rx-6750-xt-and-rx-6650-xt-graphics-cards/ (AMD's RX 6000 specification table)"
)
_RX6800 = (
    "https://www.financialexpress.com/industry/technology/amd-launches-radeon-rx-6000-series-gpus-to-take-on-"
    "nvidias-rtx-3000-cards-everything-to-know/2116713/"
)
_RX5600 = "https://www.tomshardware.com/news/amd-launches-radeon-rx-5600-xt-ultimate-1080p-gaming-gpu-at-dollar279"
_RX500 = (
    "https://it.slashdot.org/?fhfilter=graphics&page=46&view=search (HotHardware on AMD's RX 580 / RX 570 launch "
    "figures)"
)
_RX480 = (
    "https://hwready.it/recensioni/asus-strix-radeon-rx-480-8gb-recensione/2/; https://www.ozeros.com/2016/05/amd-"
    "lanza-la-nueva-radeon-rx-480-viene-equipada-con-2304-stream-processors/"
)


def _rx(model: str, variant: str, cus: int, boost: int | None, bw: float | None, family: str, **kw) -> Part:
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


# Rows only for cards whose clock was confirmed (or, RX 6600, whose bandwidth was); compute units from ROCm's GPU
# specifications table (https://rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html) or AMD's launch tables.
AMD_RADEON: tuple[Part, ...] = (
    # RDNA4 (Navi 44/48)
    _rx(
        "9070",
        "xt",
        64,
        2970,
        640.0,
        "RDNA4",
        source=f"{_RADEON}; https://pocketmags.com/it/linux-format-magazine/june-2025/articles/inside-the-dna-of-amd",
    ),
    _rx(
        "9070",
        "",
        56,
        2520,
        640.0,
        "RDNA4",
        source=f"{_RADEON}; https://club386.com/amd-radeon-rx-9060-xt-may-sit-710mhz-higher-than-rx-9070",
    ),
    _rx(
        "9060",
        "xt",
        32,
        3130,
        None,
        "RDNA4",
        source=f"{_RADEON}; https://www.corsair.com/ca/en/explorer/diy-builder/blogs/amd-rx-9060-xt-vs-9070-whats-the-difference",
        note="memory bandwidth not confirmed",
    ),
    # 9060 (OEM only): AMD's product page as reported at launch, 2.99 GHz, 18 Gbps GDDR6 on 128 bits
    _rx(
        "9060",
        "",
        28,
        2990,
        288.0,
        "RDNA4",
        source=f"{_RADEON}; https://comextrend.com.br/amd-lanca-a-radeon-rx-9060-sua-nova-gpu-rdna-4-de-entrada-para-"
        "jogos-em-1080p",
    ),
    # RDNA3 (Navi 31/32/33). 7900 XTX: the product page's 123 TFLOPS "FP16 Matrix" figure.
    _rx("7900", "xtx", 96, 2500, 960.0, "RDNA3", published={"fp16": 123.0}),
    _rx(
        "7900",
        "xt",
        84,
        2400,
        None,
        "RDNA3",
        source=f"{_RADEON}; https://mybroadband.co.za/news/hardware/467523-amd-unveils-powerful-new-radeon-rx-7900-graphics-cards.html",
    ),
    _rx(
        "7900",
        "gre",
        80,
        2245,
        576.0,
        "RDNA3",
        source=f"{_RADEON}; https://www.cnews.cz/clanky/radeon-rx-7900-gre-vydan-specifikace-tdp-a-"
        "cena-bude-k-dostani-i-u-nas-pres-oem-trh/ (AMD's specification slide)",
    ),
    _rx(
        "7800",
        "xt",
        60,
        2430,
        624.0,
        "RDNA3",
        source=f"{_RADEON}; https://www.sportskeeda.com/gaming-tech/news-amd-radeon-rx-7800-xt-specs-prices-performance",
    ),
    _rx(
        "7700",
        "xt",
        54,
        2544,
        432.0,
        "RDNA3",
        source=f"{_RADEON}; https://www.avmagazine.it/news/gaming/amd-arrivano-le-gpu-radeon-rx-7700-xt-e-rx-7800-"
        "xt_20570.html",
    ),
    _rx(
        "7600",
        "xt",
        32,
        2755,
        288.0,
        "RDNA3",
        source=f"{_RADEON}; https://club386.com/amd-radeon-rx-9060-xt-may-sit-710mhz-higher-than-rx-9070",
    ),
    _rx(
        "7600",
        "",
        32,
        2655,
        288.0,
        "RDNA3",
        source=f"{_RADEON}; https://propakistani.pk/2023/05/25/amds-new-radeon-rx-7600-gpu-starts-at-only-269/",
    ),
    # RDNA3.5 APU (Strix Halo). The clock is the Ryzen AI Max+ 395's; ROCm lists the same 40-CU Radeon 8060S in the
    # Max+ PRO 395, 392 and 388, whose graphics clock was not confirmed. The bandwidth is the 256-bit bus with
    # LPDDR5X-8000, the fastest memory AMD lists: a system fitted with slower memory has less.
    Part(
        "AMD Radeon 8060S",
        "amd",
        r"\bradeon 8060s\b",
        f"{_ROCM_SPECS} (compute units); https://www.amd.com/en/products/processors/laptop/ryzen/ai-300-series/"
        "amd-ryzen-ai-max-plus-395.html; https://www.svethardware.cz/amd-predstavuje-ryzen-ai-max-strix-halo-s-az-"
        "16-jadry-a-gpu-se-40-cu/61477",
        {},
        256.0,
        "RDNA3.5",
        40,
        2900,
        note="clock of the Ryzen AI Max+ 395; bandwidth with LPDDR5X-8000",
    ),
    # RDNA2 (Navi 21/22/23)
    _rx("6950", "xt", 80, 2310, 576.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx("6900", "xt", 80, 2250, 512.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx("6800", "xt", 72, 2250, 512.0, "RDNA2", source=f"{_RADEON}; {_RX6800}"),
    _rx("6800", "", 60, 2105, 512.0, "RDNA2", source=f"{_RADEON}; {_RX6800}"),
    _rx("6750", "xt", 40, 2600, 432.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx("6700", "xt", 40, 2581, 384.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx("6650", "xt", 32, 2635, 280.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx("6600", "xt", 32, 2589, 256.0, "RDNA2", source=f"{_RADEON}; {_RX6X50}"),
    _rx(
        "6600",
        "",
        28,
        None,
        224.0,
        "RDNA2",
        source=f"{_RADEON}; https://www.tomshardware.com/uk/reviews/amd-radeon-rx-6600-review-xfx",
        note="boost clock not confirmed",
    ),
    # Navi 24: the 6500 XT as AMD announced it at CES 2022 (2815 MHz boost, 18 Gbps on 64 bits); the 6400's clock
    # was found only in spec databases, so it keeps its bandwidth alone, as the RX 6600 does.
    _rx(
        "6500",
        "xt",
        16,
        2815,
        144.0,
        "RDNA2",
        source=f"{_RADEON}; https://d1softballnews.com/amds-new-budget-video-card-is-officially-available-nerd4-life/",
    ),
    _rx(
        "6400",
        "",
        12,
        None,
        128.0,
        "RDNA2",
        source=f"{_RADEON}; https://geektopia.es/es/technology/2022/04/20/noticias/amp/amd-pone-a-la-venta-en-tiendas-"
        "la-rx-6400-por-159-dolares.html",
        note="boost clock not confirmed",
    ),
    # Polaris (GCN4, gfx803): AMD's compute units and boost clocks (RX 580: 36 CU x 1340 MHz x 128 = 6.17 TFLOPS, AMD's
    # figure). No bandwidth: each name covers 4 GB cards with 7 Gbps memory (224 GB/s) and 8 GB cards with 8 Gbps
    # (256 GB/s), and the RX 470 launched at 6.6 Gbps. The China-only "RX 580 2048SP" has 32 CUs: not the RX 580.
    *(
        Part(
            f"AMD Radeon RX {model}",
            "amd",
            rf"(?:\brx ?|/ ?){model}\b(?! ?(?:x|xt|m|s|2048 ?sp)\b)",
            src,
            {},
            None,
            "GCN4",
            cus,
            boost,
        )
        for model, cus, boost, src in (
            ("580", 36, 1340, f"{_RADEON}; {_RX500}"),
            ("570", 32, 1244, f"{_RADEON}; {_RX500}"),
            ("480", 36, 1266, f"{_RADEON}; {_RX480}"),
            ("470", 32, 1206, f"{_RADEON}; https://en.gamegpu.com/radeon-r-4xx-series/radeon-rx-470"),
        )
    ),
    # RDNA1 (Navi 10): pci.ids' "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]" covers these
    _rx(
        "5700",
        "xt",
        40,
        1905,
        448.0,
        "RDNA1",
        source=f"{_RADEON}; https://www.thegamingpcguide.com/2020/04/rx-5700-series-video-card-specification.html",
    ),
    _rx("5700", "", 36, 1725, 448.0, "RDNA1", source=f"{_RADEON}; {_RX5600}"),
    _rx("5600", "xt", 36, 1560, 288.0, "RDNA1", source=f"{_RADEON}; {_RX5600}", published={"fp32": 7.19}),
)

PARTS: tuple[Part, ...] = NVIDIA_DATACENTER + NVIDIA_GEFORCE + NVIDIA_WORKSTATION + AMD_INSTINCT + AMD_RADEON

# FLOP per clock per SM (NVIDIA) or per CU (AMD), dense; int8 in OP. Each row reproduces the vendor's own figures at
# the vendor's clock (e.g. H100 SXM 132 SM x 1830 MHz x 4096 = 989.4 TFLOPS bf16). fp16 without tensor cores is the
# CUDA guide's per-SM fp16 throughput x 2 (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions).
NV_RATES: dict[tuple[int, int], dict[str, int]] = {
    # GK110/GK210 (Kepler GK110/GK210 whitepaper): 192 single-precision CUDA cores per SMX -> 384 FLOP/clk; "double
    # precision ... at a rate of up to 1/3 of single precision" (64 DP units). GK210 (cc 3.7) is only the Tesla K80,
    # so 1/3 holds for every cc 3.7 device. cc 3.5 also covers GeForce GTX 780/780 Ti, which run fp64 at 1/24: a
    # name-blind fp64 rate would overstate them 8x, so cc 3.5 has none here; the Tesla rows carry NVIDIA's figures.
    (3, 5): {"fp32": 384},
    (3, 7): {"fp64": 128, "fp32": 384},
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
    # GCN5.1 (Vega 20): as GCN5, with fp64 at half rate; the MI50 and MI60 rows carry AMD's own launch figures.
    "GCN5.1": {"fp64": 64, "fp32": 128, "fp16": 256},
    # MI100 (120 CU x 1502 MHz): 11.5 fp64, 46.1 fp32 matrix, 184.6 fp16, 92.3 bf16 (ROCm's MI100 page).
    "CDNA1": {"fp64": 64, "fp32": 256, "fp16": 1024, "bf16": 512, "int8": 1024},
    # MI250 (ROCm's MI250 page): 208 CU x 1700 MHz -> 90.5 fp64/fp32 matrix, 362.1 fp16/bf16/int8; MI250X 383.0
    # fp16/bf16 at 220 CU (AMD).
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
    # MI355X: 256 CU x 2400 MHz -> 2.5 PF fp16/bf16, 5.0 PF fp8, 10.1 PF fp4, 157.3 fp32, 78.6 fp64 (AMD).
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
    # RDNA3: fp32 counts dual issue (RX 7900 XTX: 96 CU x 2500 MHz x 256 = 61.4 TFLOPS; AMD prints 61); WMMA
    # fp16/bf16/int8 at 512 (122.9 TFLOPS; AMD prints 123 fp16 on the same card); fp64 1/32 of the dual-issue rate.
    "RDNA3": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    "RDNA3.5": {"fp64": 4, "fp32": 256, "fp16": 512, "bf16": 512, "int8": 512},
    # RDNA4: RX 9070 XT 64 CU x 2970 MHz -> 48.7 TFLOPS fp32; WMMA 389 TFLOPS fp16 and 779 TOPS fp8/int8 with
    # sparsity (AMD) -> dense 1024 and 2048 per CU per clock.
    "RDNA4": {"fp32": 256, "fp16": 1024, "bf16": 1024, "fp8_e4m3": 2048, "fp8_e5m2": 2048, "int8": 2048},
}
