"""AMD table: every GFX8-GFX12 target of LLVM's AMDGPU processor table, its family and the spellings tools print.

Expected values come from the vendor sources: LLVM AMDGPUUsage "Processors" (targets, products), the ISA feature
sets of LLVM's AMDGPU.td (16-bit VALU on GFX8, packed math from GFX9, v_dot4_i32_i8 on gfx906/gfx1011/gfx1012/gfx103x,
MFMA on gfx908+, WMMA on GFX11+, xf32 on gfx942 only, fp8 on gfx942/gfx950/GFX12), ROCm's GPU specifications (family
names: MI25 "GCN5.0", MI50/MI60 "GCN5.1", MI8 "GCN3.0", MI6 "GCN4.0", MI100 "CDNA") and rocm_smi_lib's
rsmi_get_gfx_target_version (the legacy "gfx9010" / "gfx11000" spellings).
"""

from __future__ import annotations

import pytest

from gpudash.knowledge import amd_arch
from gpudash.knowledge.amd import TARGETS, parse_gfx, target_features

# LLVM AMDGPUUsage processor table, GFX8 through GFX12 (gfx940/gfx941: pre-production MI300, dropped from newer
# LLVM tables; gfx1250/gfx1251: in LLVM without public products), with the family each belongs to.
LLVM_TARGETS = {
    "gfx801": "GCN3",
    "gfx802": "GCN3",
    "gfx803": "GCN3/GCN4",
    "gfx805": "GCN3",
    "gfx810": "GCN3",
    "gfx900": "GCN5",
    "gfx902": "GCN5",
    "gfx904": "GCN5",
    "gfx906": "GCN5.1",
    "gfx908": "CDNA1",
    "gfx909": "GCN5",
    "gfx90a": "CDNA2",
    "gfx90c": "GCN5",
    "gfx940": "CDNA3",
    "gfx941": "CDNA3",
    "gfx942": "CDNA3",
    "gfx950": "CDNA4",
    "gfx1010": "RDNA1",
    "gfx1011": "RDNA1",
    "gfx1012": "RDNA1",
    "gfx1013": "RDNA1",
    "gfx1030": "RDNA2",
    "gfx1031": "RDNA2",
    "gfx1032": "RDNA2",
    "gfx1033": "RDNA2",
    "gfx1034": "RDNA2",
    "gfx1035": "RDNA2",
    "gfx1036": "RDNA2",
    "gfx1100": "RDNA3",
    "gfx1101": "RDNA3",
    "gfx1102": "RDNA3",
    "gfx1103": "RDNA3",
    "gfx1150": "RDNA3.5",
    "gfx1151": "RDNA3.5",
    "gfx1152": "RDNA3.5",
    "gfx1153": "RDNA3.5",
    "gfx1200": "RDNA4",
    "gfx1201": "RDNA4",
    "gfx1250": "GFX12.5",
    "gfx1251": "GFX12.5",
}
N, E, A = "native", "emulated", "absent"


def test_the_table_is_exactly_llvms_targets():
    assert set(TARGETS) == set(LLVM_TARGETS)


@pytest.mark.parametrize(("gfx", "family"), LLVM_TARGETS.items())
def test_every_target_has_its_family_and_a_public_source(gfx, family):
    arch = amd_arch(gfx)
    assert arch.family == family
    assert arch.precisions["fp32"] == N and arch.precisions["fp64"] == N
    assert arch.source and all(part.strip().startswith("https://") for part in arch.source.split(";"))


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Radeon Instinct MI6", "GCN4"),  # ROCm GPU specifications: MI6 GCN4.0, MI8 GCN3.0, both gfx803
        ("Ellesmere [Radeon RX 470/480/570/570X/580/580X/590]", "GCN4"),
        ("Radeon Instinct MI8", "GCN3"),
        ("Fiji [Radeon R9 FURY / NANO Series]", "GCN3"),
        ("AMD Radeon Graphics", "GCN3/GCN4"),  # the name does not say: neither is claimed
        (None, "GCN3/GCN4"),
    ],
)
def test_gfx803_family_comes_from_the_name(name, family):
    assert amd_arch("gfx803", name).family == family


@pytest.mark.parametrize(
    ("gfx", "fp16_note", "int8_note"),
    [
        ("gfx803", "fp32 rate", "no dot-product"),  # GFX8: 16-bit VALU, no packed math, no dot instructions
        ("gfx900", "packed", "no dot-product"),  # Vega 10: packed fp16, no dot instructions
        ("gfx906", "packed", "v_dot4_i32_i8"),  # Vega 20 (MI50/MI60/Radeon VII): dot instructions
        ("gfx1010", "packed", "no dot-product"),  # Navi 10 lacks the dot instructions...
        ("gfx1012", "packed", "v_dot4_i32_i8"),  # ...Navi 14 has them
        ("gfx1030", "packed", "v_dot4_i32_i8"),
    ],
)
def test_pre_matrix_targets_say_exactly_what_their_vector_units_have(gfx, fp16_note, int8_note):
    arch = amd_arch(gfx)
    assert arch.matrix_unit is None  # no matrix cores before CDNA / RDNA3
    assert (arch.precisions["fp16"], arch.precisions["bf16"], arch.precisions["int8"]) == (N, E, E)
    assert any(n.startswith("fp16") and fp16_note in n for n in arch.notes)
    assert any(n.startswith("int8") and int8_note in n for n in arch.notes)


@pytest.mark.parametrize(
    ("gfx", "unit"),
    [("gfx908", "MFMA"), ("gfx90a", "MFMA"), ("gfx942", "MFMA"), ("gfx950", "MFMA"), ("gfx1100", "WMMA")]
    + [("gfx1151", "WMMA"), ("gfx1201", "WMMA"), ("gfx906", None), ("gfx1030", None)],
)
def test_matrix_units(gfx, unit):
    assert amd_arch(gfx).matrix_unit == unit


def test_tf32_only_where_the_isa_has_xf32():
    # LLVM AMDGPU.td lists FeatureXF32Insts for gfx942 only; gfx950 keeps torch's flag but has no xf32 MFMA
    assert [g for g in LLVM_TARGETS if amd_arch(g).precisions["tf32"] == N] == ["gfx940", "gfx941", "gfx942"]
    assert amd_arch("gfx950").precisions["tf32"] == E


def test_rdna3_bf16_is_native_with_a_cited_caution_and_rdna4_has_none():
    for gfx in ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"):
        arch = amd_arch(gfx)
        assert arch.precisions["bf16"] == N  # WMMA bf16 in hardware
        assert "bf16" in arch.cautions and "https://" in arch.cautions["bf16"]
    assert "pytorch/pytorch/pull/189394" in amd_arch("gfx1100").cautions["bf16"]
    assert "issues/6034" in amd_arch("gfx1151").cautions["bf16"]
    assert amd_arch("gfx1201").cautions == {} and amd_arch("gfx942").cautions == {}


def test_wheel_note_only_for_targets_outside_pytorchs_wheels():
    assert any("PyTorch ROCm wheels" in n for n in amd_arch("gfx1010").notes)
    assert any("PyTorch ROCm wheels" in n for n in amd_arch("gfx803").notes)
    assert not any("PyTorch ROCm wheels" in n for n in amd_arch("gfx1100").notes)
    assert not any("PyTorch ROCm wheels" in n for n in amd_arch("gfx906").notes)


@pytest.mark.parametrize(
    ("spelling", "gfx"),
    [
        ("gfx90a:sramecc+:xnack-", "gfx90a"),  # torch gcnArchName
        ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942"),  # rocminfo ISA name
        ("GFX Version: gfx1030", "gfx1030"),  # rocm-smi --showproductname line
        ("gfx9010", "gfx90a"),  # rocm-smi / amdsmi before 2025: minor-0 versions printed in decimal
        ("gfx9006", "gfx906"),
        ("gfx9000", "gfx900"),
        ("gfx9012", "gfx90c"),
        ("gfx8003", "gfx803"),
        ("gfx11000", "gfx1100"),
        ("gfx11003", "gfx1103"),
        ("gfx12001", "gfx1201"),
        ("gfx942", "gfx942"),  # minor != 0: the legacy spelling was already right
        ("gfx1151", "gfx1151"),
        ("10.3.0", "gfx1030"),  # HSA_OVERRIDE_GFX_VERSION: stepping is hex
        ("9.0.10", "gfx90a"),
        ("11.5.1", "gfx1151"),
        (90010, "gfx90a"),  # KFD topology gfx_target_version
        ("110501", "gfx1151"),
        ("GFX1201", "gfx1201"),
        ("gfx10-3-generic", None),  # a generic code-object target is no device
        ("gfx", None),
        ("9.0", None),
        (True, None),
        (None, None),
    ],
)
def test_parse_gfx_reads_every_spelling_tools_print(spelling, gfx):
    assert parse_gfx(spelling) == gfx


def test_legacy_rocm_smi_spelling_gets_the_right_family():
    assert amd_arch("gfx9010").family == "CDNA2"
    assert amd_arch("gfx11000").family == "RDNA3"
    assert amd_arch("gfx9006").family == "GCN5.1"


def test_target_features():
    assert target_features("gfx90a:sramecc+:xnack-") == {"sramecc": True, "xnack": False}
    assert target_features("gfx1100") == {} and target_features(None) == {}


@pytest.mark.parametrize("gfx", ["gfx700", "gfx600", "gfx1300", "gfx9999", "gfx10000"])
def test_targets_outside_gfx8_to_gfx12_are_unknown(gfx):
    assert amd_arch(gfx).family == "unknown"
