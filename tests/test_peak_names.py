"""Peak lookup reads a part's name the same way whatever the vendor's tool printed around it (issue 22 item 7):
trademark marks, vendor words and "Graphics" name no product; laptop words do (a laptop part is not the
desktop card of the same number), spelled one way."""

from __future__ import annotations

import json
import re

import pytest
from fakes import EXAMPLES

from gpudash.knowledge import match_parts, peak_memory_bandwidth_gbps, peaks_for
from gpudash.knowledge.peak_tables import PARTS
from gpudash.knowledge.peaks import _matching, normalise_name, required_literals
from gpudash.models import DeviceInfo


def _amd(name: str, gfx: str) -> DeviceInfo:
    return DeviceInfo("amd", 0, name, gfx_target=gfx)


def _nv(name: str, cc: str) -> DeviceInfo:
    return DeviceInfo("nvidia", 0, name, compute_capability=cc)


@pytest.mark.parametrize(
    "spelling",
    [
        "AMD Radeon(TM) 8060S Graphics",  # rocminfo Marketing Name
        "Radeon 8060S Graphics",  # torch.cuda.get_device_name
        "AMD Radeon 8060S Graphics",  # the example snapshot
        "AMD Radeon (TM) 8060S Graphics",
        "AMD Radeon\u2122 8060S Graphics",
        "AMD RADEON(tm) 8060S GRAPHICS",
    ],
)
def test_every_spelling_of_the_8060s_finds_its_peaks(spelling):
    reference = _amd("Radeon 8060S", "gfx1151")
    device = _amd(spelling, "gfx1151")
    assert match_parts(device).part is not None and match_parts(device).part is match_parts(reference).part
    assert peaks_for(device) == peaks_for(reference) and peaks_for(device)
    assert peak_memory_bandwidth_gbps(device) == peak_memory_bandwidth_gbps(reference)


@pytest.mark.parametrize(
    ("spelling", "plain"),
    [
        ("AMD Radeon(R) RX 7900 XTX", "AMD Radeon RX 7900 XTX"),
        ("AMD Radeon\u00ae RX 7900 XTX", "AMD Radeon RX 7900 XTX"),
        ("NVIDIA Corporation GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
        ("NVIDIA GeForce RTX 4090 GPU", "NVIDIA GeForce RTX 4090"),
    ],
)
def test_marks_and_vendor_words_change_nothing(spelling, plain):
    assert normalise_name(spelling) == normalise_name(plain)


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9"),
        ("NVIDIA GeForce(R) RTX 4090 Laptop GPU", "8.9"),
        ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", "8.6"),
        ("NVIDIA GeForce RTX 3070 with Max-Q Design", "8.6"),
        ("NVIDIA GeForce RTX 4070 Max-Q", "8.9"),
    ],
)
def test_a_laptop_part_is_never_the_desktop_card(name, cc):
    device = _nv(name, cc)
    assert normalise_name(name).endswith(("laptop", "max q"))
    assert not match_parts(device).parts and peaks_for(device) == {}


def test_a_multi_product_name_keeps_its_products():
    assert normalise_name("Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]") == (
        "navi 10 radeon rx 5600 oem/5600 xt/5700/5700 xt"
    )


def _parsed_runs(pattern: str) -> list[str]:
    """The literal runs at the top of `pattern` as re's own parser reads it (each is in every match)."""
    try:
        from re import _parser as sre_parse  # Python 3.11+
    except ImportError:  # Python 3.10
        import sre_parse  # type: ignore[no-redef]
    runs, run = [], ""
    for op, value in sre_parse.parse(pattern).data:
        if str(op) == "LITERAL":
            run += chr(value)
        else:
            runs.append(run)
            run = ""
    return [*runs, run]


def test_the_text_a_pattern_needs_is_in_every_match():
    """A pattern is compiled only for a name holding the literal text it needs (required_literals); each such text
    must be one re's parser finds at the top of the pattern, or a name of that part would be missed."""
    for part in PARTS:
        needs = required_literals(part.pattern)
        assert needs, part.pattern  # every part's pattern is skipped for a name lacking its text
        runs = _parsed_runs(part.pattern)
        for text in needs:
            assert any(text in run for run in runs), (part.pattern, text, runs)
    assert required_literals(r"\bl40 ?s\b") == ("l40", "s")  # "?" makes the space optional
    assert required_literals(r"[a-z]{2}ab(?:x|y)") == ("ab",)  # classes, counts and groups are no text
    assert required_literals(r"ab|cd") == () and required_literals(r"(?i)ab") == ()


def test_skipping_patterns_finds_what_compiling_all_of_them_finds():
    names = {p.label for p in PARTS} | {f"{p.label} laptop gpu" for p in PARTS}
    names |= {d["name"] for f in EXAMPLES.glob("*.json") for d in json.loads(f.read_text()).get("devices", [])}
    for name in names:
        for vendor in ("nvidia", "amd"):
            text = normalise_name(name)
            every = [p for p in PARTS if p.vendor == vendor and re.search(p.pattern, text)]
            assert _matching(vendor, text) == every, name
