"""Architecture tables, written from the vendors' facts (NVIDIA CUDA guide and whitepapers, LLVM AMDGPU, ROCm docs).

Expected values come from the vendor tables, not from the code: each row says which vendor fact it encodes.
N/E/A = native/emulated/absent. Documented choices (see the module docstrings) are pinned here too:
fp64 is native on every GPU (low rate goes into notes); int8 is matrix-unit int8 (P100/V100 absent, dp4a-only
Pascal emulated); bf16 on RDNA1/RDNA2 emulated; tf32 on gfx950 emulated. Every target and cc of the tables, the
name-dependent facts and the spellings tools print are in tests/test_knowledge_amd.py and test_knowledge_nvidia.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudash.knowledge import (
    SUPPORT_LEVELS,
    ArchInfo,
    Peak,
    amd_arch,
    arch_for,
    cpu_arch,
    nvidia_arch,
    peak_memory_bandwidth_gbps,
    peaks_for,
)
from gpudash.models import DeviceInfo
from gpudash.precisions import PRECISIONS

N, E, A = "native", "emulated", "absent"
ORDER = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "fp4")


def row(*levels: str) -> dict[str, str]:
    assert len(levels) == len(ORDER)
    return dict(zip(ORDER, levels))


# ---------------------------------------------------------------- NVIDIA (CUDA GPUs, CUDA guide)

NVIDIA_FAMILIES = [
    ("3.0", "Kepler"),
    ("3.2", "Kepler"),
    ("3.5", "Kepler"),
    ("3.7", "Kepler"),
    ("5.0", "Maxwell"),
    ("5.2", "Maxwell"),
    ("5.3", "Maxwell"),
    ("6.0", "Pascal"),
    ("6.1", "Pascal"),
    ("6.2", "Pascal"),
    ("7.0", "Volta"),
    ("7.2", "Volta"),
    ("7.5", "Turing"),
    ("8.0", "Ampere"),
    ("8.6", "Ampere"),
    ("8.7", "Ampere"),
    ("8.9", "Ada"),
    ("9.0", "Hopper"),
    ("10.0", "Blackwell"),
    ("10.1", "Blackwell"),  # Jetson Thor up to CUDA 12.9
    ("10.3", "Blackwell"),
    ("11.0", "Blackwell"),
    ("12.0", "Blackwell"),
    ("12.1", "Blackwell"),
]


@pytest.mark.parametrize(("cc", "family"), NVIDIA_FAMILIES)
def test_nvidia_family(cc, family):
    assert nvidia_arch(cc).family == family


def test_seed_claim_cc90_is_blackwell_is_wrong():
    # The gpu-adaptive-operations seed says "Blackwell (Compute Capability >= 9.0)". Per NVIDIA's CUDA GPUs table
    # (https://developer.nvidia.com/cuda-gpus) 9.0 is Hopper (H100/H200/GH200); Blackwell is 10.x, 11.0 and 12.x.
    assert nvidia_arch("9.0").family == "Hopper"
    assert nvidia_arch("10.0").family == "Blackwell"
    assert nvidia_arch("12.0").family == "Blackwell"


NVIDIA_PRECISIONS = [
    #       fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 int8 fp4
    ("6.0", row(N, N, A, N, E, A, A, A, A)),  # P100: fast fp16, no TC, bf16 emu, no int8 TC
    ("6.1", row(N, N, A, N, E, A, A, E, A)),  # GTX 10xx/P40: fp16 1/64, int8 dp4a only
    ("7.0", row(N, N, A, N, E, A, A, A, A)),  # V100: 1st-gen TC fp16 only
    ("7.2", row(N, N, A, N, E, A, A, N, A)),  # Xavier: int8 TC
    ("7.5", row(N, N, A, N, E, A, A, E, A)),  # Turing, chip unknown: int8 TC on TU10x only, dp4a on all
    ("8.0", row(N, N, N, N, N, A, A, N, A)),  # A100
    ("8.6", row(N, N, N, N, N, A, A, N, A)),  # RTX 30xx: no fp8
    ("8.9", row(N, N, N, N, N, N, N, N, A)),  # Ada: fp8 from 8.9
    ("9.0", row(N, N, N, N, N, N, N, N, A)),  # Hopper: no fp4
    ("10.0", row(N, N, N, N, N, N, N, N, N)),  # B200: MXFP8/NVFP4
    ("12.0", row(N, N, N, N, N, N, N, N, N)),  # RTX 50xx: NVFP4
]


@pytest.mark.parametrize(("cc", "expected"), NVIDIA_PRECISIONS)
def test_nvidia_precisions(cc, expected):
    assert nvidia_arch(cc).precisions == expected


@pytest.mark.parametrize(
    ("cc", "fp8"),
    [
        ("7.5", False),
        ("8.0", False),
        ("8.6", False),
        ("8.7", False),
        ("8.9", True),
        ("9.0", True),
        ("10.0", True),
        ("12.0", True),
    ],
)
def test_nvidia_fp8_gate_matches_torch_scaled_mm(cc, fp8):
    # torch scaled_mm_arch_allowed(): major >= 9 || (major == 8 && minor == 9)
    arch = nvidia_arch(cc)
    assert arch.is_native("fp8_e4m3") is fp8
    assert arch.fp8_dtype == ("float8_e4m3fn" if fp8 else None)
    assert arch.fp8_e5m2_dtype == ("float8_e5m2" if fp8 else None)


def test_nvidia_slow_but_native_precisions_carry_notes():
    pascal = nvidia_arch("6.1")
    assert pascal.precisions["fp16"] == N
    assert any("1/64" in n and "fp16" in n for n in pascal.notes)
    geforce_ampere = nvidia_arch("8.6", "NVIDIA GeForce RTX 3090")
    assert any("half rate" in n and "fp32 accumulate" in n for n in geforce_ampere.notes)
    assert any("fp64" in n and "1/64" in n for n in geforce_ampere.notes)
    assert not any("fp64" in n and "1/" in n for n in nvidia_arch("8.0").notes)  # A100: full-rate fp64 tensor cores


@pytest.mark.parametrize("cc", ["sm_90", "9", " 9.0 ", (9, 0), 9.0])
def test_nvidia_accepts_other_spellings(cc):
    assert nvidia_arch(cc).family == "Hopper"


def test_nvidia_unlisted_cc_is_not_guessed_from_its_neighbours():
    # 10.1 is listed: Thor's number before CUDA 13 renamed it 11.0. 8.8 is no NVIDIA cc: the tables do not guess
    # (the old rule "inherit the closest lower minor" would have called a future 10.x part a B300).
    assert nvidia_arch("10.1").family == "Blackwell"
    assert nvidia_arch("8.8").family == "unknown"


@pytest.mark.parametrize("cc", [None, "", "garbage", "x.y", "99.0", "1.0", "sm_9x", object()])
def test_nvidia_unknown_is_conservative_and_never_raises(cc):
    arch = nvidia_arch(cc)
    assert arch.family == "unknown"
    assert arch.precisions["fp32"] == N
    assert all(level == A for p, level in arch.precisions.items() if p != "fp32")
    assert arch.fp8_dtype is None and arch.fp8_e5m2_dtype is None
    assert arch.notes  # says why


def test_nvidia_pre_pascal_is_named_but_conservative():
    maxwell = nvidia_arch("5.2")
    assert maxwell.family == "Maxwell"
    assert maxwell.precisions["bf16"] == E and maxwell.precisions["tf32"] == A
    assert nvidia_arch("3.7").family == "Kepler"


# ---------------------------------------------------------------- AMD (LLVM AMDGPU, ROCm docs)

AMD_FAMILIES = [
    ("gfx908", "CDNA1"),
    ("gfx90a", "CDNA2"),
    ("gfx942", "CDNA3"),
    ("gfx950", "CDNA4"),
    ("gfx1010", "RDNA1"),
    ("gfx1011", "RDNA1"),
    ("gfx1012", "RDNA1"),
    ("gfx1030", "RDNA2"),
    ("gfx1031", "RDNA2"),
    ("gfx1032", "RDNA2"),
    ("gfx1035", "RDNA2"),
    ("gfx1036", "RDNA2"),
    ("gfx1100", "RDNA3"),
    ("gfx1101", "RDNA3"),
    ("gfx1102", "RDNA3"),
    ("gfx1103", "RDNA3"),
    ("gfx1150", "RDNA3.5"),
    ("gfx1151", "RDNA3.5"),
    ("gfx1152", "RDNA3.5"),
    ("gfx1200", "RDNA4"),
    ("gfx1201", "RDNA4"),
]


@pytest.mark.parametrize(("gfx", "family"), AMD_FAMILIES)
def test_amd_family(gfx, family):
    assert amd_arch(gfx).family == family


@pytest.mark.parametrize("spelling", ["gfx942:sramecc+:xnack-", "GFX942", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"])
def test_amd_strips_feature_suffixes(spelling):
    # torch gcnArchName is e.g. "gfx942:sramecc+:xnack-" ; rocminfo prints the amdgcn triple
    assert amd_arch(spelling).family == "CDNA3"


AMD_PRECISIONS = [
    #            fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 int8 fp4
    ("gfx908", row(N, N, A, N, N, A, A, N, A)),  # MI100 MFMA, no fp8
    ("gfx90a", row(N, N, A, N, N, A, A, N, A)),  # MI200
    ("gfx942", row(N, N, N, N, N, N, N, N, A)),  # MI300: tf32 (xf32) + fp8 FNUZ
    ("gfx950", row(N, N, E, N, N, N, N, N, N)),  # MI350: no xf32 unit, OCP fp8 + MXFP4
    ("gfx1010", row(N, N, A, N, E, A, A, E, A)),  # RDNA1: packed fp16, bf16 emu, no matrix unit
    ("gfx1030", row(N, N, A, N, E, A, A, E, A)),  # RDNA2: same
    ("gfx1100", row(N, N, A, N, N, A, A, N, A)),  # RDNA3 WMMA: fp16/bf16/int8, fp8 invalid
    ("gfx1151", row(N, N, A, N, N, A, A, N, A)),  # RDNA3.5 (Strix Halo)
    ("gfx1201", row(N, N, A, N, N, N, N, N, A)),  # RDNA4: OCP fp8
]


@pytest.mark.parametrize(("gfx", "expected"), AMD_PRECISIONS)
def test_amd_precisions(gfx, expected):
    assert amd_arch(gfx).precisions == expected


@pytest.mark.parametrize(
    ("gfx", "e4m3", "e5m2"),
    [
        ("gfx942", "float8_e4m3fnuz", "float8_e5m2fnuz"),  # _scaled_mm_is_fnuz() true on gfx942 only
        ("gfx942:sramecc+:xnack-", "float8_e4m3fnuz", "float8_e5m2fnuz"),
        ("gfx950", "float8_e4m3fn", "float8_e5m2"),
        ("gfx1200", "float8_e4m3fn", "float8_e5m2"),
        ("gfx1201", "float8_e4m3fn", "float8_e5m2"),
        ("gfx90a", None, None),
        ("gfx1100", None, None),
        ("gfx1151", None, None),
    ],
)
def test_amd_fp8_dtype_flavour(gfx, e4m3, e5m2):
    arch = amd_arch(gfx)
    assert (arch.fp8_dtype, arch.fp8_e5m2_dtype) == (e4m3, e5m2)


def test_amd_notes_warn_about_known_platform_bugs():
    for gfx in ("gfx1100", "gfx1150", "gfx1151"):
        caution = amd_arch(gfx).cautions["bf16"]
        assert "probe" in caution and "https://github.com/" in caution
    assert any("is_bf16_supported" in n for n in amd_arch("gfx1030").notes)  # torch says True anyway
    assert any("wheel" in n for n in amd_arch("gfx1010").notes)  # gfx1010 is in no official wheel
    assert any("fnuz" in n.lower() for n in amd_arch("gfx942").notes)


@pytest.mark.parametrize("gfx", [None, "", "gfx700", "gfx9999", "gfx1300", "garbage", 942, ":sramecc+"])
def test_amd_unknown_is_conservative_and_never_raises(gfx):
    arch = amd_arch(gfx)
    assert arch.family == "unknown"
    assert arch.precisions["fp32"] == N
    assert all(level == A for p, level in arch.precisions.items() if p != "fp32")
    assert arch.fp8_dtype is None


# ---------------------------------------------------------------- CPU (ISA features, fp8 without hardware)

SPR_EMR_FEATURES = ["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_bf16", "amx_int8"]


def cpu(vendor=None, family=None, model=None, features=(), cores=None, mhz=None, logical=None):
    extra = {}
    if vendor is not None:
        extra = {"cpu_vendor": vendor, "cpu_family": family, "cpu_model": model}
    return DeviceInfo(
        vendor="cpu",
        index=0,
        name="test cpu",
        cpu_features=list(features),
        multiprocessors=cores,
        max_clock_mhz=mhz,
        logical_cores=logical,
        extra=extra,
    )


@pytest.mark.parametrize(
    ("vendor", "family", "model", "features", "expected"),
    [
        ("GenuineIntel", 6, 85, ["avx512_f"], "Skylake-SP"),
        ("GenuineIntel", 6, 85, ["avx512_f", "avx512_vnni"], "Cascade Lake"),
        ("GenuineIntel", 6, 106, [], "Ice Lake-SP"),
        ("GenuineIntel", 6, 108, [], "Ice Lake-SP"),
        ("GenuineIntel", 6, 143, [], "Sapphire Rapids"),
        ("GenuineIntel", 6, 207, [], "Emerald Rapids"),  # the reference's measurement machine
        ("GenuineIntel", "6", "173", [], "Granite Rapids"),
        ("GenuineIntel", 6, 174, [], "Granite Rapids"),
        ("AuthenticAMD", 23, 0x01, [], "Zen/Zen+"),
        ("AuthenticAMD", 23, 0x31, [], "Zen 2"),  # Rome
        ("AuthenticAMD", 25, 0x01, [], "Zen 3"),  # Milan
        ("AuthenticAMD", 25, 0x21, [], "Zen 3"),  # Vermeer
        ("AuthenticAMD", 25, 0x11, [], "Zen 4"),  # Genoa
        ("AuthenticAMD", "0x19", "0x61", [], "Zen 4"),  # Raphael, hex spelling
        ("AuthenticAMD", 26, 0x44, [], "Zen 5"),
        ("GenuineIntel", 6, 151, [], "CPU"),  # a client part we do not name
        # A KVM guest on a Sapphire Rapids-class host that reported model 167 (this project's VM, 2026-11-28)
        ("GenuineIntel", 6, 167, ["avx512_f", "avx512_bf16", "amx_bf16"], "Sapphire Rapids or later (AMX)"),
        ("GenuineIntel", 6, 167, ["avx512_f", "avx512_bf16"], "CPU"),
        ("AuthenticAMD", 25, 0xB0, [], "CPU"),
        (None, None, None, [], "CPU"),
    ],
)
def test_cpu_microarch(vendor, family, model, features, expected):
    assert cpu_arch(cpu(vendor, family, model, features)).family == expected


def test_cpu_with_amx_and_avx512_fp16_has_native_bf16_fp16_int8():
    arch = cpu_arch(cpu("GenuineIntel", 6, 207, SPR_EMR_FEATURES))
    assert arch.precisions == row(N, N, A, N, N, E, E, N, A)
    assert (arch.fp8_dtype, arch.fp8_e5m2_dtype) == ("float8_e4m3fn", "float8_e5m2")  # CPU _scaled_mm rejects fnuz
    assert any("fp8" in n and "no CPU hardware" in n for n in arch.notes)


def test_cpu_with_avx2_only_emulates_the_16_bit_types():
    arch = cpu_arch(cpu("AuthenticAMD", 23, 0x71, ["avx2", "fma3"]))
    assert arch.family == "Zen 2"
    assert arch.precisions == row(N, N, A, E, E, E, E, E, A)


@pytest.mark.parametrize(
    ("features", "bf16", "fp16", "int8"),
    [
        (["avx512_f", "avx512_bf16"], N, E, E),
        (["amx_bf16"], N, E, E),
        (["avx512_fp16"], E, N, E),
        (["amx_fp16"], E, N, E),
        (["avx_vnni"], E, E, N),
        (["avx512_vnni"], E, E, N),
        (["amx_int8"], E, E, N),
        (["avx512f", "avx512_bf16"], N, E, E),  # /proc/cpuinfo spelling
    ],
)
def test_cpu_precision_follows_isa_flags(features, bf16, fp16, int8):
    arch = cpu_arch(cpu("GenuineIntel", 6, 143, features))
    assert (arch.precisions["bf16"], arch.precisions["fp16"], arch.precisions["int8"]) == (bf16, fp16, int8)


def test_arm_cpu_flags():
    arch = cpu_arch(cpu("ARM", 8, 0xD40, ["asimd", "bf16", "fphp", "i8mm"]))
    assert arch.family == "CPU"
    assert (arch.precisions["bf16"], arch.precisions["fp16"], arch.precisions["int8"]) == (N, N, N)
    bare = cpu_arch(cpu("ARM", 8, 0xD03, ["asimd"]))
    assert (bare.precisions["bf16"], bare.precisions["fp16"], bare.precisions["int8"]) == (E, E, E)


# ---------------------------------------------------------------- dispatch and invariants


def test_arch_for_dispatches_on_vendor():
    assert arch_for(DeviceInfo("nvidia", 0, "NVIDIA H100 80GB HBM3", compute_capability="9.0")).family == "Hopper"
    assert arch_for(DeviceInfo("amd", 0, "AMD Instinct MI300X", gfx_target="gfx942:sramecc+:xnack-")).family == "CDNA3"
    assert arch_for(cpu("GenuineIntel", 6, 143, SPR_EMR_FEATURES)).family == "Sapphire Rapids"
    assert arch_for(DeviceInfo("intel", 0, "Arc")).family == "unknown"
    # an NVIDIA device never reads gfx_target, an AMD device never reads compute_capability
    assert arch_for(DeviceInfo("amd", 0, "x", compute_capability="9.0")).family == "unknown"


ALL_ARCHS = (
    [nvidia_arch(cc) for cc, _ in NVIDIA_FAMILIES]
    + [amd_arch(g) for g, _ in AMD_FAMILIES]
    + [cpu_arch(cpu("GenuineIntel", 6, 207, SPR_EMR_FEATURES)), cpu_arch(cpu()), nvidia_arch(None), amd_arch(None)]
)


@pytest.mark.parametrize("arch", ALL_ARCHS, ids=lambda a: a.family)
def test_every_arch_names_every_precision_with_a_valid_level(arch: ArchInfo):
    assert tuple(arch.precisions) == PRECISIONS
    assert set(arch.precisions.values()) <= set(SUPPORT_LEVELS)
    assert arch.source  # cites its table
    # an fp8 dtype is given exactly where fp8 runs at all
    assert (arch.fp8_dtype is not None) == (arch.precisions["fp8_e4m3"] != A)


def test_returned_precision_maps_are_independent_copies():
    nvidia_arch("9.0").precisions["fp8_e4m3"] = A
    assert nvidia_arch("9.0").precisions["fp8_e4m3"] == N


def test_knowledge_imports_no_torch_textual_or_vendor_binding():
    code = (
        "import sys, gpudash.knowledge; "
        "bad = [m for m in ('torch', 'textual', 'pynvml', 'amdsmi') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- peaks (datasheets and formulas)


def nv(name, cc, sms=None, mhz=None):
    return DeviceInfo("nvidia", 0, name, compute_capability=cc, multiprocessors=sms, max_clock_mhz=mhz)


def amd(name, gfx, cus=None, mhz=None):
    return DeviceInfo("amd", 0, name, gfx_target=gfx, multiprocessors=cus, max_clock_mhz=mhz)


@pytest.mark.parametrize(
    ("device", "precision", "tflops"),
    [
        # H100 SXM: 989.4 bf16 / 1978.9 fp8 / 494.7 tf32 / 66.9 fp64 TC (driver reports 1980 MHz: the table wins)
        (nv("NVIDIA H100 80GB HBM3", "9.0", 132, 1980), "bf16", 989.4),
        (nv("NVIDIA H100 80GB HBM3", "9.0", 132, 1980), "fp8_e4m3", 1978.9),
        (nv("NVIDIA H100 80GB HBM3", "9.0", 132, 1980), "tf32", 494.7),
        (nv("NVIDIA H100 80GB HBM3", "9.0", 132, 1980), "fp64", 67.0),  # datasheet "FP64 Tensor Core 67"
        (nv("NVIDIA H200", "9.0"), "bf16", 989.4),  # "H200 is the same"
        (nv("NVIDIA A100-SXM4-80GB", "8.0", 108, 1410), "bf16", 312.0),
        (nv("NVIDIA A100 80GB PCIe", "8.0"), "bf16", 312.0),
        (nv("NVIDIA A100-SXM4-40GB", "8.0"), "int8", 624.0),
        (nv("NVIDIA GeForce RTX 4090", "8.9", 128, 2520), "bf16", 165.2),  # fp32-accumulate column
        (nv("NVIDIA GeForce RTX 4090", "8.9", 128, 2520), "fp8_e4m3", 330.3),
        (nv("NVIDIA GeForce RTX 3090", "8.6", 82, 1695), "fp16", 71.0),
        (amd("AMD Instinct MI300X", "gfx942", 304, 2100), "bf16", 1307.4),
        (amd("AMD Instinct MI300X", "gfx942", 304, 2100), "fp8_e4m3", 2614.9),
        (amd("AMD Instinct MI250X", "gfx90a", 110, 1700), "bf16", 191.5),  # one GCD: 383 halved
        (amd("AMD Radeon RX 5600 XT", "gfx1010", 36, 1560), "fp32", 7.19),
    ],
)
def test_named_part_peaks_are_spec(device, precision, tflops):
    peak = peaks_for(device)[precision]
    assert peak.provenance == "spec"
    assert peak.gflops == pytest.approx(tflops * 1000, rel=1e-3)
    assert peak.basis


@pytest.mark.parametrize(
    ("device", "precision", "gflops"),
    [
        # L20 is not in the table: 92 SM x 2520 MHz x 1024 FLOP/clk/SM (AD10x full rate)
        (nv("NVIDIA L20", "8.9", 92, 2520), "bf16", 92 * 2520 * 1024 / 1000),
        # Laptop GeForce is no desktop row: formula, 16-bit tensor math at half rate with fp32 accumulate
        (nv("NVIDIA GeForce RTX 4080 Laptop GPU", "8.9", 58, 2280), "bf16", 58 * 2280 * 512 / 1000),
        # ...but int8 is not halved (RTX 4090 whitepaper row: int8 = 4x the fp32-accumulate bf16 rate)
        (nv("NVIDIA GeForce RTX 4080 Laptop GPU", "8.9", 58, 2280), "int8", 58 * 2280 * 2048 / 1000),
        # H800 PCIe is not in the table: 114 SM x 1755 MHz x 4096
        (nv("NVIDIA H800 PCIe", "9.0", 114, 1755), "bf16", 114 * 1755 * 4096 / 1000),
        # rocminfo's generic APU name: RDNA3.5 WMMA 512 FLOP/clk/CU from the device's own CUs and clock
        (amd("AMD Radeon Graphics", "gfx1151", 40, 2900), "fp16", 40 * 2900 * 512 / 1000),
        # a partition (a VF of one XCD, or an MI300X in CPX mode): its own CU count, never the whole MI300X's datasheet
        (amd("AMD Instinct MI300X VF", "gfx942", 38, 2100), "bf16", 38 * 2100 * 2048 / 1000),
        (amd("AMD Instinct MI300X", "gfx942", 38, 2100), "bf16", 38 * 2100 * 2048 / 1000),
        # GTX 16xx (TU116) without a row: no tensor cores; fp16 on FP16 units at 2x fp32 (20 SM x 1725 MHz x 256)
        (nv("NVIDIA GeForce GTX 1650 SUPER", "7.5", 20, 1725), "fp16", 20 * 1725 * 256 / 1000),
    ],
)
def test_formula_peaks_are_estimated(device, precision, gflops):
    peak = peaks_for(device)[precision]
    assert peak.provenance == "estimated"
    assert peak.gflops == pytest.approx(gflops)
    assert "formula" in peak.basis and str(device.max_clock_mhz) in peak.basis


def test_formula_fills_only_what_the_named_part_lacks():
    peaks = peaks_for(amd("AMD Radeon RX 5600 XT", "gfx1010", 36, 1620))
    assert peaks["fp32"].provenance == "spec"  # AMD's 7.19 TFLOPS
    assert peaks["fp16"].provenance == "spec-derived"  # packed fp16, 2x fp32, at AMD's 1560 MHz, not the driver's
    assert peaks["fp16"].gflops == pytest.approx(36 * 1560 * 256 / 1000)
    assert "bf16" not in peaks  # emulated on RDNA1: no meaningful peak


def test_no_peak_for_precisions_that_are_not_native():
    peaks = peaks_for(nv("NVIDIA A100-SXM4-80GB", "8.0", 108, 1410))
    assert "fp8_e4m3" not in peaks and "fp4" not in peaks
    assert "bf16" not in peaks_for(nv("Tesla V100-SXM2-16GB", "7.0", 80, 1530))
    assert "int8" not in peaks_for(nv("NVIDIA GeForce GTX 1660 Ti", "7.5", 24, 1770))  # dp4a only: emulated


def test_peaks_without_clock_or_units_give_only_the_table():
    assert peaks_for(nv("NVIDIA L20", "8.9")) == {}
    assert peaks_for(nv("NVIDIA H100 80GB HBM3", "9.0"))["bf16"].provenance == "spec"
    assert peaks_for(nv("NVIDIA GeForce RTX 3070", "8.6"))["fp32"].provenance == "spec-derived"


def test_cpu_peaks_match_the_reference_sanity_run():
    # a 2-core 2.1 GHz Emerald Rapids VM, AVX-512 + AMX -> fp64 0.134, fp32 0.269, AMX-bf16 4.3, AMX-int8 8.6 TFLOPS
    peaks = peaks_for(cpu("GenuineIntel", 6, 207, SPR_EMR_FEATURES, cores=2, mhz=2100))
    assert peaks["fp64"].gflops == pytest.approx(134.4)
    assert peaks["fp32"].gflops == pytest.approx(268.8)
    assert peaks["bf16"].gflops == pytest.approx(4300.8)
    assert peaks["int8"].gflops == pytest.approx(8601.6)
    assert all(p.provenance == "estimated" for p in peaks.values())
    basis = peaks["fp32"].basis
    assert "2 physical cores" in basis and "2100 MHz" in basis and "base clock" in basis
    assert "fp8_e4m3" not in peaks  # no fp8 hardware: no peak


@pytest.mark.parametrize(
    ("vendor", "family", "model", "features", "fp32_rate", "bf16_rate", "int8_rate"),
    [
        ("AuthenticAMD", 25, 0x11, ["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_vnni"], 32, 64, 128),  # Zen 4
        ("AuthenticAMD", 26, 0x44, ["avx2", "fma3", "avx512_f", "avx512_bf16", "avx512_vnni"], 64, 128, 256),  # Zen 5
        ("GenuineIntel", 6, 85, ["avx2", "fma3", "avx512_f", "avx512_vnni"], 64, None, 256),  # Cascade Lake
        ("AuthenticAMD", 23, 0x31, ["avx2", "fma3"], 32, None, None),  # Zen 2
    ],
)
def test_cpu_peak_rates_by_isa(vendor, family, model, features, fp32_rate, bf16_rate, int8_rate):
    peaks = peaks_for(cpu(vendor, family, model, features, cores=16, mhz=3000))
    assert peaks["fp32"].gflops == pytest.approx(16 * 3000 * fp32_rate / 1000)
    assert peaks["fp64"].gflops == pytest.approx(16 * 3000 * fp32_rate / 2000)
    for precision, rate in (("bf16", bf16_rate), ("int8", int8_rate)):
        if rate is None:
            assert precision not in peaks
        else:
            assert peaks[precision].gflops == pytest.approx(16 * 3000 * rate / 1000)


def test_cpu_peaks_need_cores_clock_and_a_vector_isa():
    assert peaks_for(cpu("GenuineIntel", 6, 207, SPR_EMR_FEATURES, cores=None, mhz=2100)) == {}
    assert peaks_for(cpu("ARM", 8, 1, ["asimd"], cores=8, mhz=3000)) == {}
    logical = peaks_for(cpu("GenuineIntel", 6, 207, ["avx2", "fma3"], logical=4, mhz=2000))
    assert "logical cores" in logical["fp32"].basis


@pytest.mark.parametrize(
    ("device", "gbps"),
    [
        (nv("NVIDIA H100 80GB HBM3", "9.0"), 3350.0),
        (nv("NVIDIA H200", "9.0"), 4800.0),
        (nv("NVIDIA A100-SXM4-80GB", "8.0"), 2039.0),
        (nv("NVIDIA A100 80GB PCIe", "8.0"), 1935.0),
        (nv("NVIDIA A100-SXM4-40GB", "8.0"), 1555.0),
        (nv("NVIDIA GeForce RTX 3080", "8.6"), 760.0),
        (nv("NVIDIA L4", "8.9"), 300.0),
        (amd("AMD Instinct MI250X/MI250", "gfx90a"), 1638.4),  # per GCD, the same on both products the name covers
        (amd("AMD Instinct MI300X", "gfx942"), 5300.0),
        (amd("AMD Radeon RX 5600 XT", "gfx1010"), 288.0),
        (amd("AMD Radeon RX 6600", "gfx1032"), 224.0),  # a row with a bandwidth and no confirmed clock
        (amd("AMD Radeon RX 6400", "gfx1034"), 128.0),
        (amd("AMD Radeon RX 9060", "gfx1200"), 288.0),
        (nv("NVIDIA GeForce RTX 5050", "12.0"), 320.0),
        (nv("NVIDIA H20", "9.0"), 4000.0),  # not the H200's 4800
        (nv("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"), 1792.0),
    ],
)
def test_memory_bandwidth_for_named_parts(device, gbps):
    peak = peak_memory_bandwidth_gbps(device)
    assert isinstance(peak, Peak)
    assert (peak.gflops, peak.provenance) == (gbps, "spec")


@pytest.mark.parametrize(
    "device",
    [
        nv("NVIDIA L20", "8.9"),
        nv("NVIDIA GH200 480GB", "9.0"),  # 96 GB HBM3 (4 TB/s) or 144 GB HBM3e (4.9 TB/s): the name does not say
        nv("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
        amd("Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]", "gfx1010"),
        DeviceInfo("nvidia", 0, "AMD Instinct MI300X"),  # a part matches only under its own vendor
        cpu("GenuineIntel", 6, 207, SPR_EMR_FEATURES),
    ],
)
def test_memory_bandwidth_unknown_is_none(device):
    assert peak_memory_bandwidth_gbps(device) is None


@pytest.mark.parametrize(
    "device",
    [
        DeviceInfo(
            "nvidia",
            0,
            None,
            compute_capability="garbage",  # type: ignore[arg-type]
            multiprocessors="many",
            max_clock_mhz=-1,
        ),  # type: ignore[arg-type]
        DeviceInfo("amd", 0, "x", gfx_target=None, multiprocessors=0, max_clock_mhz=2000),
        DeviceInfo(
            "cpu",
            0,
            "x",
            cpu_features=None,
            extra=None,  # type: ignore[arg-type]
            multiprocessors=2,
            max_clock_mhz=2000,
        ),
        DeviceInfo("tpu", 0, "x"),
    ],
)
def test_peaks_never_raise(device):
    assert isinstance(peaks_for(device), dict)
    peak_memory_bandwidth_gbps(device)
    assert isinstance(arch_for(device), ArchInfo)


def test_a_whole_gpu_virtual_function_gets_the_parts_figures():
    """Clouds pass an MI300X to a VM as its one SR-IOV function ("AMD Instinct MI300X VF", all 304 CUs): that is
    the whole GPU, with the MI300X's datasheet figures and bandwidth; a partition does not get them."""
    from gpudash.knowledge import peak_memory_bandwidth_gbps

    whole = amd("AMD Instinct MI300X VF", "gfx942", 304, 2100)
    assert peaks_for(whole)["bf16"].provenance == "spec" and peaks_for(whole)["bf16"].gflops == 1307.4e3
    assert peak_memory_bandwidth_gbps(whole).gflops == 5300.0
    assert peak_memory_bandwidth_gbps(amd("AMD Instinct MI300X", "gfx942", 38, 2100)) is None  # a CPX partition
