"""A reason that cites a benchmark figure also says how it compares with the best measured on the part.

The published MAMF (gpudash/knowledge/mamf.py) tells a reader whether a benchmark figure is what the part
reaches in practice (80 % of it) or a sign that something is off (30 %), which "% of spec peak" cannot: no part
reaches its spec peak, and how far below it lands differs by vendor.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudash.knowledge.mamf import SOURCE_NAME, mamf_for, of_mamf
from gpudash.recommend.facts import Facts
from gpudash.recommend.settings import Settings


def mamf_phrase(facts: Facts, precision: str) -> str | None:
    """'bf16 benchmark best 650,000 GFLOPS = 82% of the best measured on NVIDIA H100 SXM (MAMF 794.5 TFLOPS,
    ml-engineering MAMF table)', or None without a benchmark figure or a published MAMF."""
    if facts.bench is None:
        return None
    row = mamf_for(facts.device).get(precision)
    result = facts.bench.results.get(precision)
    if row is None or result is None or not result.supported:
        return None
    ratio = of_mamf(result.measured_gflops, row)
    if ratio is None:
        return None
    return (
        f"{precision} benchmark best {result.measured_gflops:,.0f} GFLOPS = {ratio:.0%} of the best measured on "
        f"{row.accelerator} (MAMF {row.tflops:,.1f} TFLOPS, {SOURCE_NAME})"
    )


def add_mamf(facts: Facts, settings: Settings) -> None:
    """Every reason that cites the benchmark and names a precision with a MAMF gets the phrase above (a bf16
    "measured only 0.9x fp32" on an H100 then shows its bf16 figure at a few % of what the part reaches: a
    measurement to distrust); the export's notes carry each phrase once, as the benchmark's figures are cited
    nowhere else on a GPU."""
    phrases = {p: text for p in mamf_for(facts.device) if (text := mamf_phrase(facts, p))}
    if not phrases:
        return
    settings.notes.extend(phrases.values())
    for values in settings.sections.values():
        for name, setting in values.items():
            if "benchmark" not in setting.reason:
                continue
            cited = [text for p, text in phrases.items() if re.search(rf"\b{p}\b", setting.reason)]
            if cited:
                values[name] = replace(setting, reason=f"{setting.reason}; {'; '.join(cited)}")
