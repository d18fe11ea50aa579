"""NVIDIA table: every compute capability 3.0-12.1, and the facts that differ inside one cc (the name decides).

Expected values come from NVIDIA's own tables: the CUDA C++ Programming Guide (compute capabilities; per-SM fp16
throughput: N/A on 3.x-5.2, 256 on 5.3, 128 on 6.0, 2 on 6.1, 256 on 6.2), the CUDA GPUs list, the Turing
whitepaper (TU116/TU117 have no tensor cores, FP16 units at 2x fp32), the GA102/Ada whitepapers (GeForce runs
fp32-accumulate tensor math at half rate, RTX A6000/A40/RTX 6000 Ada/L40S at full rate) and the CUDA 13 library
release notes (Thor renumbered 10.1 -> 11.0).
"""

from __future__ import annotations

import pytest

from gpudash.knowledge import arch_for, nvidia_arch
from gpudash.knowledge.nvidia import known_ccs, parse_cc
from gpudash.models import DeviceInfo

N, E, A = "native", "emulated", "absent"

CCS = {
    (3, 0): "Kepler",
    (3, 2): "Kepler",
    (3, 5): "Kepler",
    (3, 7): "Kepler",
    (5, 0): "Maxwell",
    (5, 2): "Maxwell",
    (5, 3): "Maxwell",
    (6, 0): "Pascal",
    (6, 1): "Pascal",
    (6, 2): "Pascal",
    (7, 0): "Volta",
    (7, 2): "Volta",
    (7, 5): "Turing",
    (8, 0): "Ampere",
    (8, 6): "Ampere",
    (8, 7): "Ampere",
    (8, 9): "Ada",
    (9, 0): "Hopper",
    (10, 0): "Blackwell",
    (10, 1): "Blackwell",
    (10, 3): "Blackwell",
    (11, 0): "Blackwell",
    (12, 0): "Blackwell",
    (12, 1): "Blackwell",
}


def test_every_cc_from_3_to_12_is_in_the_table():
    assert known_ccs() == tuple(sorted(CCS))


@pytest.mark.parametrize(("cc", "family"), CCS.items(), ids=lambda v: str(v))
def test_every_cc_has_its_family_and_public_sources(cc, family):
    arch = nvidia_arch(f"{cc[0]}.{cc[1]}")
    assert arch.family == family
    assert all(part.strip().startswith("https://") for part in arch.source.split(";"))


@pytest.mark.parametrize(
    ("cc", "fp16"),
    [("3.5", E), ("5.2", E), ("5.3", N), ("6.0", N), ("6.1", N), ("6.2", N), ("7.0", N)],
)
def test_fp16_follows_the_cuda_guides_throughput_table(cc, fp16):
    assert nvidia_arch(cc).precisions["fp16"] == fp16


def test_jetson_tx2_fp16_is_fast_unlike_consumer_pascal():
    # CUDA guide: 16-bit fp results per clock per SM are 256 on 6.2 (2x fp32) but 2 on 6.1
    assert any("twice the fp32 rate" in n for n in nvidia_arch("6.2").notes)
    assert not any("1/64" in n for n in nvidia_arch("6.2").notes)
    assert any("1/64" in n and "fp16" in n for n in nvidia_arch("6.1").notes)


TU11X = [
    "NVIDIA GeForce GTX 1660 Ti",
    "NVIDIA GeForce GTX 1660 SUPER",
    "NVIDIA GeForce GTX 1650",
    "NVIDIA GeForce GTX 1630",
    "Quadro T1000",
    "NVIDIA T600",
    "NVIDIA GeForce MX450",
]
TU10X = ["NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2060", "Tesla T4", "NVIDIA TITAN RTX", "Quadro RTX 6000"]


@pytest.mark.parametrize("name", TU11X)
def test_tu116_tu117_have_no_tensor_cores(name):
    arch = nvidia_arch("7.5", name)
    assert arch.matrix_unit is None
    assert arch.precisions["fp16"] == N and arch.precisions["int8"] == E  # FP16 units; int8 via dp4a only
    assert not any("tensor" in n and "no " not in n for n in arch.notes)  # no note claims tensor cores
    assert any("no tensor cores" in n and "FP16 units" in n for n in arch.notes)


@pytest.mark.parametrize("name", TU10X)
def test_tu10x_have_fp16_and_int8_tensor_cores(name):
    arch = nvidia_arch("7.5", name)
    assert arch.matrix_unit == "tensor cores"
    assert arch.precisions["int8"] == N
    assert not any("no tensor cores" in n for n in arch.notes)


def test_turing_without_a_name_claims_only_what_every_turing_chip_has():
    arch = nvidia_arch("7.5")
    assert arch.matrix_unit is None and arch.precisions["int8"] == E
    assert any("name decides" in n for n in arch.notes)


def test_arch_for_passes_the_device_name():
    gtx = DeviceInfo("nvidia", 0, "NVIDIA GeForce GTX 1660 SUPER", compute_capability="7.5")
    t4 = DeviceInfo("nvidia", 0, "Tesla T4", compute_capability="7.5")
    assert arch_for(gtx).matrix_unit is None and arch_for(t4).matrix_unit == "tensor cores"


@pytest.mark.parametrize(
    ("cc", "name", "note"),
    [
        ("8.6", "NVIDIA GeForce RTX 3090", "half rate"),
        ("8.9", "NVIDIA GeForce RTX 4090", "half rate"),
        ("8.6", "NVIDIA RTX A6000", "full rate"),
        ("8.6", "NVIDIA A40", "full rate"),
        ("8.9", "NVIDIA RTX 6000 Ada Generation", "full rate"),
        ("8.9", "NVIDIA L40S", "full rate"),
        ("8.9", None, "the device name decides"),
    ],
)
def test_fp32_accumulate_rate_note_is_true_of_the_chip(cc, name, note):
    notes = nvidia_arch(cc, name).notes
    assert any(note in n for n in notes)
    if note == "full rate":
        assert not any("half rate" in n for n in notes)


def test_thor_is_blackwell_under_both_numbers():
    old, new = nvidia_arch("10.1"), nvidia_arch("11.0")
    assert old.family == new.family == "Blackwell"
    assert old.precisions == new.precisions
    assert any("10.1 to 11.0" in n for n in old.notes + new.notes)


@pytest.mark.parametrize(
    ("spelling", "cc"),
    [("sm_90", (9, 0)), ("sm_100a", (10, 0)), ("sm_120f", (12, 0)), ("compute_89", (8, 9)), ("12.1", (12, 1))],
)
def test_parse_cc_spellings(spelling, cc):
    assert parse_cc(spelling) == cc


@pytest.mark.parametrize("cc", ["8.8", "10.7", "13.0", "2.1"])
def test_unlisted_ccs_are_unknown(cc):
    assert nvidia_arch(cc).family == "unknown"
