"""docs/peak-sources.md is the verification record of the peak tables: every figure a part row gives (spec TFLOPS,
bandwidth, SM/CU count, clock) appears there with the same value and the place it was confirmed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpudash.knowledge.peak_tables import PARTS, Part

DOC = Path(__file__).resolve().parent.parent / "docs" / "peak-sources.md"


def _figures(part: Part) -> dict[str, float]:
    out = {("fp8" if k.startswith("fp8") else k): v for k, v in part.tflops.items()}
    for key, value in (("bandwidth", part.bandwidth_gbs), ("units", part.units), ("boost", part.boost_mhz)):
        if value is not None:
            out[key] = float(value)
    return out


def _sections() -> dict[str, dict[str, tuple[float, str]]]:
    sections: dict[str, dict[str, tuple[float, str]]] = {}
    current: dict[str, tuple[float, str]] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            current = sections.setdefault(line[4:].strip(), {})
        elif current is not None and (m := re.match(r"\| (\w+) \| ([0-9.]+) \S+.*\| (.+) \|$", line)):
            current[m.group(1)] = (float(m.group(2)), m.group(3))
    return sections


SECTIONS = _sections()


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.label)
def test_every_figure_of_the_table_is_recorded_with_where_it_was_confirmed(part):
    recorded = SECTIONS.get(part.label)
    assert recorded is not None, f"docs/peak-sources.md has no section for {part.label}"
    figures = _figures(part)
    assert {k: v for k, (v, _) in recorded.items()} == pytest.approx(figures)
    for key, (_, where) in recorded.items():
        assert "https://" in where or "search-index id" in where, (part.label, key)


def test_the_record_has_no_part_the_table_lacks():
    assert set(SECTIONS) == {p.label for p in PARTS}
