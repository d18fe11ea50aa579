"""Per precision: native by the spec tables (1/0), verified by gpudash's probe (1/0), and when it ran.

`verified` is present only for precisions a probe ran on this machine: "not run" is an absent series, never
a 0. Its `verdict` label tells a verified fast path from a correct but slow reference path (slow_reference).
"""

from __future__ import annotations

from gpudash.exporter.family import Family
from gpudash.exporter.remembered import epoch_seconds
from gpudash.exporter.scrape import Scrape
from gpudash.knowledge import NATIVE, arch_for
from gpudash.precisions import PRECISIONS


def families(scrape: Scrape) -> list[Family]:
    native = Family(
        "gpudash_precision_spec_native", "1 when the architecture runs the precision natively (spec tables)"
    )
    verified = Family(
        "gpudash_precision_verified",
        "1 when gpudash's probe ran the precision and its numbers matched an fp64 reference, 0 when it failed; "
        "verdict: verified, slow_reference (correct, far below fp32's rate) or failed",
    )
    error = Family("gpudash_precision_max_relative_error", "Largest relative error the probe's matmul saw (ratio)")
    when = Family("gpudash_probe_timestamp_seconds", "When the remembered probe of this device ran, Unix seconds")
    for device in scrape.devices:
        levels = arch_for(device).precisions
        for precision in PRECISIONS:
            native.add(scrape.with_labels(device, precision=precision), levels.get(precision) == NATIVE)
        matrix = scrape.results.probes.get(device.key)
        if matrix is None or matrix.provenance != "measured":
            continue
        when.add(scrape.with_labels(device), epoch_seconds(matrix.measured_at))
        for precision, result in matrix.results.items():
            labels = scrape.with_labels(device, precision=precision)
            if result.verified is not None:
                verified.add({**labels, "verdict": result.verdict or ""}, result.verified)
            error.add(labels, result.max_rel_error)
    return [native, verified, error, when]
