"""Named parts: each reachable by the name tools print, datasheet figures dense, multi-product names ambiguous.

Figures are the vendors' (NVIDIA datasheets print tensor figures "with sparsity" and say dense is half; AMD's
Instinct pages; GA102/Ada whitepaper appendices for the GeForce rows that have them). Spec-derived figures are
checked against the vendor's own headline numbers where one exists (RTX 5090: 3352 sparse fp4 "AI TOPS").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudash.knowledge import peak_memory_bandwidth_gbps, peaks_for
from gpudash.knowledge.peak_tables import PARTS
from gpudash.knowledge.peaks import match_parts, peak_candidates
from gpudash.models import DeviceInfo

# label -> (vendor, name as nvidia-smi / rocminfo / torch print it, cc or gfx)
NAMES = {
    "NVIDIA V100 SXM2": ("nvidia", "Tesla V100-SXM2-32GB", "7.0"),
    "NVIDIA V100 PCIe": ("nvidia", "Tesla V100-PCIE-16GB", "7.0"),
    "NVIDIA V100S PCIe": ("nvidia", "Tesla V100S-PCIE-32GB", "7.0"),
    "NVIDIA P100 SXM2": ("nvidia", "Tesla P100-SXM2-16GB", "6.0"),
    "NVIDIA P100 PCIe 16GB": ("nvidia", "Tesla P100-PCIE-16GB", "6.0"),
    "NVIDIA P100 PCIe 12GB": ("nvidia", "Tesla P100-PCIE-12GB", "6.0"),
    "NVIDIA T4": ("nvidia", "Tesla T4", "7.5"),
    "NVIDIA Tesla P40": ("nvidia", "Tesla P40", "6.1"),
    "NVIDIA Tesla P4": ("nvidia", "Tesla P4", "6.1"),
    "NVIDIA Tesla K80 (one GPU)": ("nvidia", "Tesla K80", "3.7"),
    "NVIDIA Tesla K40": ("nvidia", "Tesla K40m", "3.5"),
    "NVIDIA Tesla K20X": ("nvidia", "Tesla K20Xm", "3.5"),
    "NVIDIA Tesla K20": ("nvidia", "Tesla K20m", "3.5"),
    "NVIDIA GB10": ("nvidia", "NVIDIA GB10", "12.1"),
    "NVIDIA GeForce GTX 1660": ("nvidia", "NVIDIA GeForce GTX 1660", "7.5"),
    "NVIDIA GeForce GTX 1660 Ti": ("nvidia", "NVIDIA GeForce GTX 1660 Ti", "7.5"),
    "NVIDIA GeForce GTX 1660 SUPER": ("nvidia", "NVIDIA GeForce GTX 1660 SUPER", "7.5"),
    "NVIDIA Quadro RTX 8000": ("nvidia", "Quadro RTX 8000", "7.5"),
    "NVIDIA Quadro RTX 6000": ("nvidia", "Quadro RTX 6000", "7.5"),
    "NVIDIA Quadro RTX 5000": ("nvidia", "Quadro RTX 5000", "7.5"),
    "NVIDIA Quadro RTX 4000": ("nvidia", "Quadro RTX 4000", "7.5"),
    "NVIDIA A100 40GB": ("nvidia", "NVIDIA A100-SXM4-40GB", "8.0"),
    "NVIDIA A100 80GB PCIe": ("nvidia", "NVIDIA A100 80GB PCIe", "8.0"),
    "NVIDIA A100 80GB SXM": ("nvidia", "NVIDIA A100-SXM4-80GB", "8.0"),
    "NVIDIA A30": ("nvidia", "NVIDIA A30", "8.0"),
    "NVIDIA A10": ("nvidia", "NVIDIA A10", "8.6"),
    "NVIDIA A40": ("nvidia", "NVIDIA A40", "8.6"),
    "NVIDIA L4": ("nvidia", "NVIDIA L4", "8.9"),
    "NVIDIA L40": ("nvidia", "NVIDIA L40", "8.9"),
    "NVIDIA L40S": ("nvidia", "NVIDIA L40S", "8.9"),
    "NVIDIA H100 SXM": ("nvidia", "NVIDIA H100 80GB HBM3", "9.0"),
    "NVIDIA H100 PCIe": ("nvidia", "NVIDIA H100 PCIe", "9.0"),
    "NVIDIA H100 NVL": ("nvidia", "NVIDIA H100 NVL", "9.0"),
    "NVIDIA H200 SXM": ("nvidia", "NVIDIA H200", "9.0"),
    "NVIDIA H200 NVL": ("nvidia", "NVIDIA H200 NVL", "9.0"),
    "NVIDIA H20": ("nvidia", "NVIDIA H20", "9.0"),
    "NVIDIA GH200 (96GB HBM3)": ("nvidia", "NVIDIA GH200 96GB HBM3", "9.0"),
    "NVIDIA GH200 (144GB HBM3e)": ("nvidia", "NVIDIA GH200 144G HBM3e", "9.0"),
    "NVIDIA B200": ("nvidia", "NVIDIA B200", "10.0"),
    "NVIDIA GB200": ("nvidia", "NVIDIA GB200", "10.0"),
    "NVIDIA B300": ("nvidia", "NVIDIA B300 SXM6 AC", "10.3"),
    "NVIDIA Jetson AGX Orin 64GB": ("nvidia", "NVIDIA Jetson AGX Orin 64GB", "8.7"),
    "NVIDIA Jetson AGX Orin 32GB": ("nvidia", "NVIDIA Jetson AGX Orin 32GB", "8.7"),
    "NVIDIA Jetson Orin NX 16GB": ("nvidia", "NVIDIA Jetson Orin NX 16GB", "8.7"),
    "NVIDIA Jetson Orin NX 8GB": ("nvidia", "NVIDIA Jetson Orin NX 8GB", "8.7"),
    "NVIDIA GB300": ("nvidia", "NVIDIA GB300", "10.3"),
    "NVIDIA RTX A6000": ("nvidia", "NVIDIA RTX A6000", "8.6"),
    "NVIDIA RTX A4000": ("nvidia", "NVIDIA RTX A4000", "8.6"),
    "NVIDIA RTX 6000 Ada Generation": ("nvidia", "NVIDIA RTX 6000 Ada Generation", "8.9"),
    "NVIDIA RTX PRO 6000 Blackwell": ("nvidia", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
    "AMD Radeon Instinct MI50": ("amd", "AMD Radeon Instinct MI50", "gfx906"),
    "AMD Radeon Instinct MI60": ("amd", "AMD Radeon Instinct MI60", "gfx906"),
    "AMD Radeon 8060S": ("amd", "AMD Radeon 8060S Graphics", "gfx1151"),
    "AMD Instinct MI100": ("amd", "AMD Instinct MI100", "gfx908"),
    "AMD Instinct MI210": ("amd", "AMD Instinct MI210", "gfx90a"),
    "AMD Instinct MI250 (one GCD)": ("amd", "AMD Instinct MI250", "gfx90a"),
    "AMD Instinct MI250X (one GCD)": ("amd", "AMD Instinct MI250X", "gfx90a"),
    "AMD Instinct MI300A": ("amd", "AMD Instinct MI300A", "gfx942"),
    "AMD Instinct MI300X": ("amd", "AMD Instinct MI300X", "gfx942"),
    "AMD Instinct MI325X": ("amd", "AMD Instinct MI325X", "gfx942"),
    "AMD Instinct MI350X": ("amd", "AMD Instinct MI350X", "gfx950"),
    "AMD Instinct MI355X": ("amd", "AMD Instinct MI355X", "gfx950"),
}
_CC = {"20": "7.5", "30": "8.6", "40": "8.9", "50": "12.0"}
for _part in PARTS:  # GeForce RTX and Radeon rows: the label is the name the tools print
    if _part.label.startswith("NVIDIA GeForce RTX"):
        NAMES[_part.label] = ("nvidia", _part.label, _CC[_part.label.split("RTX ")[1][:2]])
    elif _part.label.startswith("AMD Radeon RX"):
        NAMES[_part.label] = (
            "amd",
            _part.label,
            {"RDNA1": "gfx1010", "RDNA2": "gfx1030", "RDNA3": "gfx1100", "GCN4": "gfx803"}.get(_part.arch, "gfx1201"),
        )


def device(vendor: str, name: str, arch_id: str | None = None, units=None, mhz=None) -> DeviceInfo:
    return DeviceInfo(
        vendor,
        0,
        name,
        compute_capability=arch_id if vendor == "nvidia" else None,
        gfx_target=arch_id if vendor == "amd" else None,
        multiprocessors=units,
        max_clock_mhz=mhz,
    )


def test_every_part_has_a_real_name_in_this_test():
    assert {p.label for p in PARTS} == set(NAMES)


@pytest.mark.parametrize("label", sorted(NAMES))
def test_each_part_is_reached_by_its_name_and_only_it(label):
    match = match_parts(device(*NAMES[label]))
    assert match.part is not None and match.part.label == label, match.candidates


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.label)
def test_every_part_cites_a_public_source_and_has_a_figure(part):
    assert "https://" in part.source
    assert part.tflops or part.bandwidth_gbs or (part.units and part.boost_mhz)
    peaks = peaks_for(device(*NAMES[part.label]))
    assert all(pk.provenance in ("spec", "spec-derived") for pk in peaks.values())


def test_no_source_in_the_knowledge_package_points_outside_the_repo():
    root = Path(__file__).resolve().parent.parent / "gpudash" / "knowledge"
    text = "\n".join(p.read_text() for p in root.glob("*.py"))
    assert not re.search(r"shared/|reference/precision\.md|precision\.md|seeds/|design\.md|§", text)


@pytest.mark.parametrize(
    ("name", "arch_id", "precision", "tflops"),
    [
        ("NVIDIA L4", "8.9", "fp8_e4m3", 242.5),  # 485 with sparsity
        ("NVIDIA L4", "8.9", "bf16", 121.0),
        ("NVIDIA L40S", "8.9", "bf16", 362.05),  # the datasheet's dense column (733 with sparsity)
        ("NVIDIA H100 PCIe", "9.0", "bf16", 756.5),  # 1513 with sparsity
        ("NVIDIA H100 NVL", "9.0", "fp8_e4m3", 1670.5),  # 3341 with sparsity
        ("NVIDIA H200", "9.0", "bf16", 989.5),  # 1979 with sparsity
        ("NVIDIA B200", "10.0", "bf16", 2250.0),
        ("NVIDIA B200", "10.0", "fp4", 9000.0),
        ("NVIDIA GB200", "10.0", "fp8_e4m3", 5000.0),
        ("NVIDIA B300 SXM6 AC", "10.3", "fp64", 1.25),  # Blackwell Ultra cut fp64
        ("Tesla V100-SXM2-16GB", "7.0", "fp16", 125.0),
        ("Tesla P100-PCIE-16GB", "6.0", "fp16", 18.7),
        ("NVIDIA A30", "8.0", "tf32", 82.5),
        ("NVIDIA GeForce RTX 3080", "8.6", "fp32", 29.8),  # NVIDIA's launch figure
        ("AMD Instinct MI355X", "gfx950", "fp4", 10100.0),
        ("AMD Instinct MI300A", "gfx942", "bf16", 980.6),
        ("AMD Instinct MI100", "gfx908", "bf16", 92.3),  # half the fp16 rate on CDNA1
        ("AMD Radeon RX 7900 XTX", "gfx1100", "fp16", 123.0),  # AMD's "FP16 Matrix" figure
        ("NVIDIA RTX 6000 Ada Generation", "8.9", "fp8_e4m3", 728.5),  # 1457.0 "effective FP8" with sparsity
        ("NVIDIA GB300", "10.3", "fp4", 15000.0),  # the NVL72 rack's 1,080 PF dense over its 72 GPUs
        ("AMD Radeon Instinct MI60", "gfx906", "fp16", 29.5),  # AMD's launch figure
        ("Tesla K40m", "3.5", "fp64", 1.43),  # NVIDIA's Tesla table
        ("Tesla K80", "3.7", "fp32", 8.74 / 2),  # the board's 8.74 TFLOPS, one of its two GPUs
        ("Quadro RTX 6000", "7.5", "fp16", 130.5),  # "Tensor Performance", fp16 with fp32 accumulate, dense
        ("NVIDIA GB10", "12.1", "fp4", 500.0),  # NVIDIA's "1 petaFLOP FP4" is with sparsity
    ],
)
def test_datasheet_figures_are_dense(name, arch_id, precision, tflops):
    peak = peaks_for(device("amd" if arch_id.startswith("gfx") else "nvidia", name, arch_id))[precision]
    assert peak.provenance == "spec"
    assert peak.gflops == pytest.approx(tflops * 1000, rel=1e-3)
    assert "https://" in peak.basis


@pytest.mark.parametrize(
    ("name", "arch_id", "precision", "vendor_figure_tflops"),
    [
        # NVIDIA's "3352 AI TOPS" (fp4 with sparsity) / 2 against 170 SM x 2410 MHz x 4096
        ("NVIDIA GeForce RTX 5090", "12.0", "fp4", 3352 / 2),
        ("NVIDIA GeForce RTX 5080", "12.0", "fp4", 1801 / 2),
        # AMD's 48.7 TFLOPS fp32 for the RX 9070 XT against 64 CU x 2970 MHz x 256
        ("AMD Radeon RX 9070 XT", "gfx1201", "fp32", 48.7),
        # AMD's 123 TFLOPS fp16 for the RX 7900 XTX against WMMA bf16 at 96 CU x 2500 MHz x 512
        ("AMD Radeon RX 7900 XTX", "gfx1100", "bf16", 123.0),
        # NVIDIA's "40 shader TFLOPS" for the RTX 3090 Ti against 84 SM x 1860 MHz x 256
        ("NVIDIA GeForce RTX 3090 Ti", "8.6", "fp32", 40.0),
        # NVIDIA's "780 Tensor-TFLOPs" (sparse) for the RTX 4080 / 2 against int8 at 76 SM x 2505 MHz x 2048
        ("NVIDIA GeForce RTX 4080", "8.9", "int8", 780 / 2),
        # the 35.5 TFLOPS fp32 NVIDIA gave for the RTX 4070 SUPER against 56 SM x 2475 MHz x 256
        ("NVIDIA GeForce RTX 4070 SUPER", "8.9", "fp32", 35.5),
        # NVIDIA's reference 13.4 TFLOPS for the RTX 2080 Ti against 68 SM x 1545 MHz x 128 (Turing: 64 lanes per SM)
        ("NVIDIA GeForce RTX 2080 Ti", "7.5", "fp32", 13.4),
        # and its 215.2 int8 TOPS (Turing whitepaper, reference clock): tensor int8 is not halved on GeForce
        ("NVIDIA GeForce RTX 2080 Ti", "7.5", "int8", 215.2),
        # AMD's 6.17 TFLOPS for the RX 580 against 36 CU x 1340 MHz x 128, and 5.1 for the RX 570 (32 CU x 1244 MHz)
        ("Radeon RX 580 Series", "gfx803", "fp32", 6.17),
        ("Radeon RX 570 Series", "gfx803", "fp32", 5.1),
    ],
)
def test_spec_derived_figures_reproduce_the_vendors_headline_numbers(name, arch_id, precision, vendor_figure_tflops):
    peak = peaks_for(device("amd" if arch_id.startswith("gfx") else "nvidia", name, arch_id))[precision]
    assert peak.provenance == "spec-derived"
    assert peak.gflops == pytest.approx(vendor_figure_tflops * 1000, rel=5e-3)


def test_a_capped_part_gets_no_tensor_figures():
    peaks = peaks_for(device("nvidia", "NVIDIA GeForce RTX 5090 D", "12.0"))
    assert set(peaks) == {"fp32"}


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA GeForce RTX 3060 Laptop GPU",
        "NVIDIA GeForce RTX 5090 Laptop GPU",
        "NVIDIA GeForce RTX 4070 Max-Q",
    ],
)
def test_laptop_parts_never_get_desktop_figures(name):
    assert match_parts(device("nvidia", name)).parts == ()


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("NVIDIA GeForce RTX 4070 Ti SUPER", "NVIDIA GeForce RTX 4070 Ti SUPER"),
        ("NVIDIA GeForce RTX 4070 Ti", "NVIDIA GeForce RTX 4070 Ti"),
        ("NVIDIA GeForce RTX 4070 SUPER", "NVIDIA GeForce RTX 4070 SUPER"),
        ("NVIDIA GeForce RTX 4070", "NVIDIA GeForce RTX 4070"),
        ("NVIDIA GeForce RTX 4080 SUPER", "NVIDIA GeForce RTX 4080 SUPER"),
        ("NVIDIA GeForce RTX 4080", "NVIDIA GeForce RTX 4080"),
        ("NVIDIA GeForce RTX 3060 Ti", "NVIDIA GeForce RTX 3060 Ti"),
        ("NVIDIA GeForce RTX 3080 Ti", "NVIDIA GeForce RTX 3080 Ti"),
        ("NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 3080"),
        ("NVIDIA GeForce RTX 3070 Ti", "NVIDIA GeForce RTX 3070 Ti"),
        ("NVIDIA GeForce RTX 3070", "NVIDIA GeForce RTX 3070"),
        ("NVIDIA GeForce RTX 4090 D", "NVIDIA GeForce RTX 4090 D"),
        ("NVIDIA GeForce RTX 5090 D", "NVIDIA GeForce RTX 5090 D"),
        ("NVIDIA GeForce RTX 5090 D v2", None),  # 384-bit bus: not the 5090 D's 1792 GB/s
        ("AMD Radeon RX 7900 XT", "AMD Radeon RX 7900 XT"),
        ("AMD Radeon RX 7900 GRE", "AMD Radeon RX 7900 GRE"),
        ("AMD Radeon RX 7600 XT", "AMD Radeon RX 7600 XT"),
        ("AMD Radeon RX 7600", "AMD Radeon RX 7600"),
        ("AMD Radeon RX 9060 XT", "AMD Radeon RX 9060 XT"),
        ("AMD Radeon RX 9060", "AMD Radeon RX 9060"),
        ("AMD Radeon RX 6500 XT", "AMD Radeon RX 6500 XT"),
        ("AMD Radeon RX 6500M", None),  # the laptop Navi 24
        ("AMD Radeon RX 6400", "AMD Radeon RX 6400"),
        ("NVIDIA GeForce RTX 5050", "NVIDIA GeForce RTX 5050"),
        ("NVIDIA GeForce RTX 5050 Laptop GPU", None),  # GDDR7, another clock
        ("NVIDIA H20", "NVIDIA H20"),
        ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "NVIDIA RTX PRO 6000 Blackwell"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA RTX PRO 6000 Blackwell"),
        ("NVIDIA RTX PRO 5000 Blackwell", None),
        ("NVIDIA H20-3e", None),  # 141 GB HBM3e: another part
        ("NVIDIA H200", "NVIDIA H200 SXM"),
        # workstation and datacenter neighbours: a laptop part, the Turing Quadro RTX 6000, an MI50 32GB (its figures
        # were not confirmed) and Blackwell's B300 never take a row that is not theirs
        ("NVIDIA RTX A4000 Laptop GPU", None),
        ("Quadro RTX 6000", "NVIDIA Quadro RTX 6000"),  # the Turing card, never the RTX 6000 Ada
        ("NVIDIA RTX 6000 Ada Generation", "NVIDIA RTX 6000 Ada Generation"),
        ("Quadro RTX 5000 with Max-Q Design", None),  # the laptop part
        ("NVIDIA GeForce RTX 2060 12GB", None),  # 34 SMs, not the 6 GB launch card's 30
        ("NVIDIA GeForce RTX 2060 SUPER", None),
        ("NVIDIA GeForce RTX 2080 SUPER", None),
        ("NVIDIA GeForce GTX 1660 Ti with Max-Q Design", None),
        ("Tesla K20Xm", "NVIDIA Tesla K20X"),
        ("Tesla K20c", "NVIDIA Tesla K20"),
        ("Tesla K40c", "NVIDIA Tesla K40"),
        ("AMD Radeon RX 580 2048SP", None),  # China-only, 32 CUs
        ("AMD Radeon RX 580X", None),
        ("AMD Radeon RX 590", None),
        ("NVIDIA GB100", None),
        ("Vega 20 [Radeon Pro VII/Radeon Instinct MI50 32GB]", None),
        ("NVIDIA GB300", "NVIDIA GB300"),
        ("NVIDIA B300 SXM6 AC", "NVIDIA B300"),
    ],
)
def test_suffixes_select_the_right_row(name, label):
    part = match_parts(device("amd" if re.search(r"AMD|Radeon", name) else "nvidia", name)).part
    assert (part.label if part else None) == label


# --- names that cover several products -------------------------------------------------------------------------------


def test_rocminfo_mi250x_slash_mi250_is_ambiguous_not_mi250x():
    dev = device("amd", "AMD Instinct MI250X/MI250", "gfx90a")
    match = match_parts(dev)
    assert match.ambiguous and set(match.candidates) == {
        "AMD Instinct MI250X (one GCD)",
        "AMD Instinct MI250 (one GCD)",
    }
    assert peaks_for(dev) == {}  # 191.5 vs 181.05 TFLOPS bf16 per GCD: no figure is both
    per = peak_candidates(dev)
    assert per["AMD Instinct MI250X (one GCD)"]["bf16"].gflops == pytest.approx(191_500)
    assert per["AMD Instinct MI250 (one GCD)"]["bf16"].gflops == pytest.approx(181_050)
    bw = peak_memory_bandwidth_gbps(dev)  # the same 1638.4 GB/s per GCD on both
    assert bw is not None and bw.gflops == 1638.4 and bw.candidates == match.candidates


def test_pci_ids_navi10_list_is_ambiguous_with_every_product_it_names():
    dev = device("amd", "Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]", "gfx1010")
    match = match_parts(dev)
    assert match.ambiguous
    assert {"AMD Radeon RX 5600 XT", "AMD Radeon RX 5700", "AMD Radeon RX 5700 XT"} <= set(match.candidates)
    assert "radeon rx 5600 oem" in match.candidates  # listed, but no table row: still a candidate
    assert peaks_for(dev) == {} and peak_memory_bandwidth_gbps(dev) is None
    assert set(peak_candidates(dev)) == {"AMD Radeon RX 5600 XT", "AMD Radeon RX 5700", "AMD Radeon RX 5700 XT"}


def test_pci_ids_navi24_list_is_ambiguous_between_the_6400_and_the_6500_xt():
    dev = device("amd", "Navi 24 [Radeon RX 6400/6500 XT/6500M]", "gfx1034")
    match = match_parts(dev)
    assert match.ambiguous and {"AMD Radeon RX 6400", "AMD Radeon RX 6500 XT"} <= set(match.candidates)
    assert peak_memory_bandwidth_gbps(dev) is None  # 128 or 144 GB/s


def test_rtx_3050_without_its_memory_size_is_ambiguous_and_laptops_match_no_desktop_row():
    bare = device("nvidia", "NVIDIA GeForce RTX 3050", "8.6")
    match = match_parts(bare)
    assert match.ambiguous and set(match.candidates) == {"NVIDIA GeForce RTX 3050 8GB", "NVIDIA GeForce RTX 3050 6GB"}
    assert peaks_for(bare) == {}  # 20 SMs at 1.78 GHz or 18 at 1.47 GHz: no figure is both
    six = match_parts(device("nvidia", "NVIDIA GeForce RTX 3050 6GB", "8.6")).part
    assert six is not None and (six.units, six.boost_mhz) == (18, 1470)
    assert match_parts(device("nvidia", "NVIDIA GeForce RTX 3050 Laptop GPU", "8.6")).parts == ()
    assert match_parts(device("nvidia", "NVIDIA GeForce RTX 3050 Ti Laptop GPU", "8.6")).parts == ()


def test_rx_6500_xt_fp32_is_derived_from_amd_announced_units_and_clock():
    peaks = peaks_for(device("amd", "AMD Radeon RX 6500 XT", "gfx1034"))
    # 16 CUs x 64 lanes x 2 (an FMA is two FLOPs; RDNA2 has no dual issue) x 2.815 GHz = 5.77 TFLOPS
    assert peaks["fp32"].gflops == pytest.approx(16 * 64 * 2 * 2.815, rel=1e-3)
    assert peaks["fp32"].provenance == "spec-derived"


def test_a_bare_family_name_keeps_only_what_every_variant_shares():
    dev = device("nvidia", "NVIDIA A100", "8.0")
    peaks = peaks_for(dev)
    assert peaks["bf16"].gflops == 312_000 and peaks["bf16"].provenance == "spec"
    assert len(peaks["bf16"].candidates) == 3 and "every product" in peaks["bf16"].basis
    assert peak_memory_bandwidth_gbps(dev) is None  # 1555, 1935 or 2039 GB/s


def test_gh200_480gb_does_not_say_which_hbm():
    dev = device("nvidia", "NVIDIA GH200 480GB", "9.0")
    assert match_parts(dev).ambiguous
    assert peaks_for(dev)["bf16"].gflops == pytest.approx(990_000)  # the GH200 datasheet's dense figure, both HBMs
    assert peak_memory_bandwidth_gbps(dev) is None


def test_jetson_orin_torch_name_covers_every_module():
    dev = device("nvidia", "Orin", "8.7")
    assert len(match_parts(dev).candidates) == 4
    assert peaks_for(dev) == {} and peak_memory_bandwidth_gbps(dev) is None


def test_formula_figures_of_an_ambiguous_device_say_so():
    dev = device("amd", "AMD Instinct MI250X/MI250", "gfx90a", units=110, mhz=1700)
    peak = peaks_for(dev)["bf16"]
    assert peak.provenance == "estimated" and peak.gflops == pytest.approx(110 * 1700 * 1024 / 1000)
    assert peak.candidates and "covers several products" in peak.basis


def test_an_opengl_renderer_suffix_is_not_another_product():
    assert not match_parts(device("nvidia", "NVIDIA GeForce RTX 3090/PCIe/SSE2")).ambiguous


# --- parts without a sourced row, and rows without a clock: the estimate from the device's own count and clock ----


def test_kepler_has_rates_so_an_unnamed_gk110_or_gk210_gets_an_estimate():
    # GK110/GK210 whitepaper: 192 fp32 lanes per SMX (384 FLOP/clk); fp64 at 1/3 on GK210 (only the K80)
    gk110 = peaks_for(device("nvidia", "NVIDIA GeForce GTX 780 Ti", "3.5", units=15, mhz=928))
    assert gk110["fp32"].provenance == "estimated" and gk110["fp32"].gflops == pytest.approx(15 * 928 * 384 / 1000)
    assert "fp64" not in gk110  # GeForce GK110 runs fp64 at 1/24, Teslas at 1/3: the name-blind rate gives none
    gk210 = peaks_for(device("nvidia", "NVIDIA GK210", "3.7", units=13, mhz=875))
    assert gk210["fp64"].provenance == "estimated"
    assert gk210["fp64"].gflops == pytest.approx(gk210["fp32"].gflops / 3)


def test_a_kepler_tesla_row_beats_the_driver_clock_estimate():
    peaks = peaks_for(device("nvidia", "Tesla K40m", "3.5", units=15, mhz=875))  # GPU Boost's top clock
    assert peaks["fp32"].provenance == "spec" and peaks["fp32"].gflops == pytest.approx(4290)
    assert peaks["fp64"].provenance == "spec" and peaks["fp64"].gflops == pytest.approx(1430)


@pytest.mark.parametrize(
    ("name", "cc", "sms", "mhz"),
    [
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9", 76, 2040),
        ("NVIDIA GeForce RTX 4050 Laptop GPU", "8.9", 20, 2370),
        ("NVIDIA GeForce RTX 5090 Laptop GPU", "12.0", 82, 2160),
        ("NVIDIA GeForce RTX 5070 Ti Laptop GPU", "12.0", 46, 2220),
    ],
)
def test_laptop_parts_are_estimated_from_their_own_sms_and_clock(name, cc, sms, mhz):
    # NVIDIA publishes a boost-clock range per laptop GPU (the laptop maker's power limit picks the clock): no row
    # invents one figure, so the device's own SM count and driver clock give every peak, labelled estimated
    peaks = peaks_for(device("nvidia", name, cc, units=sms, mhz=mhz))
    assert peaks and all(p.provenance == "estimated" for p in peaks.values())
    assert peaks["fp32"].gflops == pytest.approx(sms * mhz * 256 / 1000)
    assert peak_memory_bandwidth_gbps(device("nvidia", name, cc, units=sms, mhz=mhz)) is None


def test_gb10_gives_nvidias_figures_and_estimates_the_rest_from_the_device():
    dev = device("nvidia", "NVIDIA GB10", "12.1", units=48, mhz=2500)
    peaks = peaks_for(dev)
    assert peaks["fp4"].provenance == "spec" and peaks["fp4"].gflops == pytest.approx(500_000)
    assert peaks["fp32"].provenance == "spec" and peaks["fp32"].gflops == pytest.approx(31_000)
    assert peaks["bf16"].provenance == "estimated"  # no clock published: nothing is spec-derived
    bw = peak_memory_bandwidth_gbps(dev)
    assert bw is not None and bw.gflops == 273.0
    assert set(peaks_for(device("nvidia", "NVIDIA GB10", "12.1"))) == {"fp32", "fp4"}  # name only


def test_a_gtx_16_row_keeps_its_fp16_units_at_twice_fp32():
    # TU116 has no tensor cores: the GeForce tensor half rate does not apply (GTX 1660 Ti: 24 x 1770 x 256)
    peaks = peaks_for(device("nvidia", "NVIDIA GeForce GTX 1660 Ti", "7.5"))
    assert peaks["fp16"].gflops == pytest.approx(24 * 1770 * 256 / 1000)
    assert peaks["fp16"].gflops == pytest.approx(2 * peaks["fp32"].gflops)
    assert "int8" not in peaks  # dp4a only: no native int8
