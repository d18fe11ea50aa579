"""The batch results as a node_exporter textfile, every series labelled with the file's name.

node_exporter's textfile collector merges every *.prom file of its folder into one exposition and adds no
label of its own, so two files with a series of the same name and labels (two gpudash textfiles: both have
`gpudash_build_info{python,version}`, and files about the same host share `gpudash_machine_info`) make its
registry refuse the duplicate ("was collected before with the same name and label values") and log an error
on every scrape. `textfile="NAME.prom"` keeps each file's series apart. Families of one name must also keep
one HELP text and type across files, which one gpudash version does (tests/test_textfile_collisions.py runs
node_exporter on two files).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry
from prometheus_client.samples import Sample

TEXTFILE_LABEL = "textfile"


class _Labelled:
    def __init__(self, families: list, name: str) -> None:
        self._families, self._name = families, name

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for family in self._families:
            if not family.samples:
                continue
            labelled = GaugeMetricFamily(family.name, family.documentation)
            labelled.samples = [
                Sample(s.name, {**s.labels, TEXTFILE_LABEL: self._name}, s.value, s.timestamp, s.exemplar)
                for s in family.samples
            ]
            yield labelled


def textfile_text(collector, path: str) -> str:
    """The collector's families (batch results: a file is not live) in the text format, each sample labelled
    with the file's name."""
    from prometheus_client import generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Labelled(collector.families(), Path(path).name))
    return generate_latest(registry).decode("utf-8")
