"""Several gpudash textfiles in one node_exporter folder: Debian's real prometheus-node-exporter on 127.0.0.1
reads them, and what it serves and what it logs are checked.

node_exporter answers /metrics even when its registry refused duplicate series (node_textfile_scrape_error
stays 0; the refusal is only in its log, "was collected before with the same name and label values"), so the
log is read as well. The control case (the same files without their textfile label) shows the test would
see a collision.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, binary_or_skip, free_port, get, stop, wait_for

from gpudash.cli import main

DUPLICATE = "was collected before with the same name and label values"


@contextmanager
def node_exporter_logging(folder: Path, log: Path) -> Iterator[str]:
    """node_exporter with only the textfile collector, its log in `log`; yields its /metrics URL."""
    binary = binary_or_skip("prometheus-node-exporter")
    port = free_port()
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [binary, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
             "--collector.textfile", f"--collector.textfile.directory={folder}"],
            stdout=sink, stderr=sink,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            wait_for(url, timeout=15.0, proc=proc)
            yield url
        finally:
            stop(proc)


def scraped(folder: Path, log: Path, scrapes: int = 3) -> tuple[list, str]:
    """What node_exporter serves (its last scrape's samples) and what it logged over `scrapes` scrapes."""
    with node_exporter_logging(folder, log) as url:
        for _ in range(scrapes):
            text = get(url)
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    return samples, log.read_text()


def write_three(folder: Path) -> None:
    """Two files from the same live host (the same hostname, the same build) and a replayed DGX."""
    folder.mkdir()
    assert main(["serve", "--textfile", str(folder / "gpudash-a.prom")]) == 0
    assert main(["serve", "--textfile", str(folder / "gpudash-b.prom")]) == 0
    assert main(["--replay", str(DGX), "serve", "--textfile", str(folder / "dgx.prom")]) == 0


@pytest.mark.light
def test_two_gpudash_textfiles_in_one_folder_do_not_collide(tmp_path, no_vendor_libs):
    folder = tmp_path / "textfile"
    write_three(folder)
    samples, log = scraped(folder, tmp_path / "node_exporter.log")
    assert DUPLICATE not in log and "error gathering metrics" not in log, log
    assert [s.value for s in samples if s.name == "node_textfile_scrape_error"] == [0.0]
    build = [s for s in samples if s.name == "gpudash_build_info"]
    assert sorted(s.labels["textfile"] for s in build) == ["dgx.prom", "gpudash-a.prom", "gpudash-b.prom"]
    machines = [s for s in samples if s.name == "gpudash_machine_info"]
    assert len(machines) == 3 and len({s.labels["hostname"] for s in machines}) == 2  # two files, one host
    info = [s for s in samples if s.name == "gpudash_device_info"]
    assert len(info) == 10 and {s.labels["vendor"] for s in info} == {"nvidia", "cpu"}  # 8 + cpu twice
    mtimes = {s.labels["file"] for s in samples if s.name == "node_textfile_mtime_seconds"}
    assert {Path(f).name for f in mtimes} == {"dgx.prom", "gpudash-a.prom", "gpudash-b.prom"}  # every file read


@pytest.mark.light
def test_the_same_files_without_their_label_collide_in_node_exporters_log(tmp_path, no_vendor_libs):
    """The control: strip the label gpudash adds and node_exporter logs the duplicates (what it did before),
    while still serving node_textfile_scrape_error 0, which is why the old test never noticed."""
    folder = tmp_path / "textfile"
    write_three(folder)
    for path in folder.glob("*.prom"):
        path.write_text(re.sub(r',?textfile="[^"]*"', "", path.read_text()).replace("{}", ""))
    samples, log = scraped(folder, tmp_path / "node_exporter.log")
    assert DUPLICATE in log and "gpudash_build_info" in log
    assert [s.value for s in samples if s.name == "node_textfile_scrape_error"] == [0.0]


def test_the_label_names_the_file(tmp_path, no_vendor_libs):
    path = tmp_path / "node-a.prom"
    assert main(["serve", "--textfile", str(path)]) == 0
    families = list(text_string_to_metric_families(path.read_text()))
    assert families and all(s.labels.get("textfile") == "node-a.prom" for f in families for s in f.samples)
