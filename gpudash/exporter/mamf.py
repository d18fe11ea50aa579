"""The published MAMF of each device's part, and the remembered benchmark over it.

MAMF (maximum achievable matmul FLOPS) is the best matmul throughput published for a part (gpudash/knowledge/
mamf.py: Stas Bekman's ml-engineering table, each figure with its source). A replayed device gets its reference
too: it is a fact about the part, not a measurement of this device. The ratio needs a remembered live benchmark.
"""

from __future__ import annotations

from gpudash.exporter.bench import newest_by_precision
from gpudash.exporter.family import Family
from gpudash.exporter.scrape import Scrape
from gpudash.knowledge.mamf import SOURCE, SOURCE_NAME, mamf_for, of_mamf

TERA = 1e12


def families(scrape: Scrape) -> list[Family]:
    reference = Family(
        "gpudash_matmul_mamf_reference_flops_per_second",
        "Best matmul throughput published for this device's part (MAMF: maximum achievable matmul FLOPS), "
        f"FLOP/s; not measured here: the {SOURCE_NAME} (source URL, the part measured and its torch in the labels)",
    )
    ratio = Family(
        "gpudash_bench_matmul_mamf_ratio",
        "Best measured matmul throughput here over the MAMF published for the part (above 1 is possible)",
    )
    runs = scrape.results.bench_runs
    for device in scrape.devices:
        rows = mamf_for(device)
        if not rows:
            continue
        measured = newest_by_precision(runs, device)
        for precision, row in rows.items():
            reference.add(
                scrape.with_labels(device, precision=precision, source=SOURCE, part=row.accelerator, torch=row.torch),
                row.tflops * TERA,
            )
            if precision in measured:
                result = measured[precision][0]
                ratio.add(scrape.with_labels(device, precision=precision), of_mamf(result.get("measured_gflops"), row))
    return [reference, ratio]
