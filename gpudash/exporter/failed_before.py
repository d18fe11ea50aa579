"""The memory of bad GPUs (gpudash.health.memory): every check a GPU failed before, so `gpudash fleet` can say
"this GPU failed gpu.row_remap on 2026-11-20" for any host, and notice the same board turning up on another.

`gpudash_health_failed_before_timestamp_seconds{UUID, check_id, severity}` is the last sighting (Unix seconds;
severity is the worst seen), `gpudash_health_failed_before_sightings{UUID, check_id}` the check runs that found
it. A GPU this host remembers but no longer has (lost, pulled, replaced) keeps its series with `hostname` and
`UUID` only, because that is exactly the board an operator looks for. Only failed checks have series, so a
healthy fleet adds none.
"""

from __future__ import annotations

from gpudash.exporter.family import Family
from gpudash.exporter.remembered import epoch_seconds
from gpudash.exporter.scrape import Scrape


def families(scrape: Scrape) -> list[Family]:
    last = Family(
        "gpudash_health_failed_before_timestamp_seconds",
        "When `gpudash check` last found this GPU failing the check (Unix seconds); severity is the worst seen",
    )
    sightings = Family(
        "gpudash_health_failed_before_sightings", "How many `gpudash check` runs found this GPU failing the check"
    )
    by_uuid = {d.uuid: d for d in scrape.devices if d.uuid}
    for uuid, failures in scrape.results.gpu_failures.items():
        device = by_uuid.get(uuid)
        labels = scrape.with_labels(device) if device else {"hostname": scrape.hostname, "UUID": uuid}
        for failure in failures:
            when = epoch_seconds(failure.last)
            if when is None:
                continue
            last.add({**labels, "check_id": failure.id, "severity": failure.severity}, when)
            sightings.add({**labels, "check_id": failure.id}, failure.count)
    return [last, sightings]
