"""gpudash's metrics in the real engines: Debian's Prometheus scrapes `gpudash serve` and answers PromQL over
its series; Debian's node_exporter serves the textfile. No mock: the binaries run here, on 127.0.0.1.

Skipped only when a binary is missing on a developer's machine; .ci/run installs both.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.parse

import pytest
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, REPO, get, gpudash_serve, node_exporter, prometheus

from gpudash.cli import main


def query(base: str, promql: str) -> list[dict]:
    data = json.loads(get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})))
    assert data["status"] == "success", data
    return data["data"]["result"]


def wait_query(base: str, promql: str, want: int, timeout: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        result = query(base, promql)
        if len(result) >= want or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def target(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc


def test_prometheus_scrapes_gpudash_and_answers_promql(tmp_path):
    # The live CPU gets a real (short) probe first, so its verified series exists.
    probe = subprocess.run(
        [sys.executable, "-m", "gpudash", "probe", "--device", "cpu:0", "--precision", "fp32", "--json"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    with (
        gpudash_serve("--replay", str(DGX)) as (dgx, _),
        gpudash_serve() as (live, _),
        prometheus(tmp_path, [target(dgx), target(live)]) as base,
    ):
        up = wait_query(base, 'up{job="gpudash"} == 1', want=2)
        assert len(up) == 2, up
        native = wait_query(base, 'count by (hostname) (gpudash_precision_spec_native{precision="fp32"} == 1)', 2)
        counts = {r["metric"]["hostname"]: int(r["value"][1]) for r in native}
        assert counts["dgx-h100-example"] == 8 and counts[socket.gethostname()] == 1, counts
        verified = query(base, 'gpudash_precision_verified{precision="fp32"}')
        assert [(r["metric"]["device_key"], r["value"][1]) for r in verified] == [("cpu:0", "1")]
        # The join a Grafana panel does with dcgm-exporter's series goes through UUID.
        joined = query(
            base,
            'gpudash_device_memory_total_bytes{UUID!=""} * on(UUID) group_left(modelName) '
            'gpudash_precision_spec_native{precision="fp8_e4m3"}',
        )
        assert len(joined) == 8 and all(r["metric"]["modelName"] == "NVIDIA H100 80GB HBM3" for r in joined)
        # Prometheus keeps its own instance/job: gpudash never sends labels it would rename to exported_*.
        assert query(base, '{__name__=~"gpudash_.+", exported_instance=~".+"}') == []
        assert query(base, '{__name__=~"gpudash_.+", exported_job=~".+"}') == []
        rec = query(base, 'gpudash_recommendation_info{hostname="dgx-h100-example"}')
        assert {r["metric"]["amp_dtype"] for r in rec} == {"bfloat16"}


@pytest.mark.light
def test_node_exporter_serves_the_textfiles(tmp_path, no_vendor_libs):
    folder = tmp_path / "textfile"
    folder.mkdir()
    assert main(["--replay", str(DGX), "serve", "--textfile", str(folder / "dgx.prom")]) == 0
    assert main(["serve", "--textfile", str(folder / "live.prom")]) == 0  # NVIDIA and CPU label sets together
    with node_exporter(folder) as url:
        text = get(url)
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    errors = [s.value for s in samples if s.name == "node_textfile_scrape_error"]
    assert errors == [0.0], [s for s in samples if s.name.startswith("node_textfile")]
    info = [s for s in samples if s.name == "gpudash_device_info"]
    assert len(info) == 9 and {s.labels["vendor"] for s in info} == {"nvidia", "cpu"}
    assert not [s for s in samples if s.name == "gpudash_device_utilization_ratio"]  # batch results only


def test_fleet_reads_prometheus_with_a_dead_target_and_history(tmp_path, capsys):
    from servers import dcgm_page, exposition_server, free_port

    mi300x = REPO / "examples" / "snapshots" / "mi300x.json"
    dead = f"127.0.0.1:{free_port()}"
    with (
        gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _),
        gpudash_serve("--replay", str(mi300x), "--hostname", "node-b") as (b, _),
        exposition_server(dcgm_page(DGX, "node-a", util=75.0)) as (dcgm, _),
        prometheus(tmp_path, [target(a), target(b), target(dcgm), dead]) as base,
    ):
        wait_query(base, 'up{job="gpudash"} == 1', want=3)
        wait_query(base, "DCGM_FI_DEV_GPU_UTIL", want=8)
        wait_query(base, f'up{{instance="{dead}"}} == 0', want=1)  # Prometheus has tried the dead one
        # docs/fleet.md's join: dcgm-exporter's utilisation with gpudash's recommended dtype, on UUID.
        joined = query(base, "DCGM_FI_DEV_GPU_UTIL * on(UUID) group_left(amp_dtype) gpudash_recommendation_info")
        assert len(joined) == 8 and {r["metric"]["amp_dtype"] for r in joined} == {"bfloat16"}
        assert {r["value"][1] for r in joined} == {"75"}
        native = query(
            base,
            'DCGM_FI_DEV_GPU_TEMP * on(UUID) group_left() (gpudash_precision_spec_native{precision="fp8_e4m3"} == 1)',
        )
        assert len(native) == 8 and all(r["metric"]["Hostname"] == "node-a" for r in native)
        assert main(["fleet", "--prometheus", base, "--json"]) == 1  # the dead target makes it unhealthy
        doc = json.loads(capsys.readouterr().out)
        hosts = {h["host"]: h for h in doc["hosts"]}
        assert doc["source"] == {"kind": "prometheus", "url": base}
        assert hosts["node-a"]["status"] == "up" and hosts["node-a"]["gpus"] == 8  # and 4 MIG instances' rows
        gpu = hosts["node-a"]["devices"][0]
        assert sorted(gpu["sources"]) == ["dcgm", "gpudash"] and gpu["utilization_ratio"] == 0.75
        assert gpu["amp_dtype"] == "bfloat16"
        assert hosts["node-b"]["devices"][0]["name"] == "AMD Instinct MI300X"
        assert hosts["127.0.0.1"]["status"] == "unreachable"
        assert "connection refused" in hosts["127.0.0.1"]["error"]
        assert main(["fleet", "--prometheus", base, "--host", "node-a"]) == 0
        detail = capsys.readouterr().out
        assert detail.startswith("node-a: up (replayed)")
        assert "nvidia:0 utilisation, last" in detail and "(min 75%, max 75%)" in detail  # from query_range
