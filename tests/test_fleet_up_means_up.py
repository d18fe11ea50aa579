""" "Up" means up (issue 26 item 4, issue 23's fleet face): an endpoint with no device series is empty unless its
host is expected to have none; a lost GPU or fewer GPUs than expected is degraded, and `fleet` exits 1; each
host's worst health severity is in the table, the JSON and the drill-down. Real `gpudash serve` replays (a lost
GPU planted the way tests/health_snapshots.py plants it), loopback exposition servers, and a real Prometheus."""

from __future__ import annotations

import json
import time

import pytest
from health_snapshots import faulty_replay
from servers import DGX, exposition_server, gpudash_serve, prometheus

from gpudash.actions import fleet as action
from gpudash.cli import main
from gpudash.contracts.validation import problems
from gpudash.errors import UsageError
from gpudash.fleet.prometheus import PrometheusSource
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import targets_from

pytestmark = pytest.mark.light

NODE_EXPORTER_PAGE = "# HELP node_load1 1m load average.\n# TYPE node_load1 gauge\nnode_load1 0.25\n"
HTML_PAGE = "<!doctype html>\n<html><body><h1>Grafana</h1></body></html>\n"


def gpu_page(host: str, gpus: int, lost: tuple[int, ...] = (), critical: dict[int, str] | None = None) -> str:
    """gpudash serve's series for `gpus` NVIDIA GPUs: utilisation, gpudash_device_lost and one health check
    per GPU in the enum pattern (a series per severity, 1 for the result's)."""
    lines = []
    for i in range(gpus):
        labels = f'hostname="{host}",device_key="nvidia:{i}",gpu="{i}",UUID="GPU-{host}-{i}",modelName="NVIDIA H100"'
        lines.append(f"gpudash_device_utilization_ratio{{{labels}}} 0.5")
        lines.append(f"gpudash_device_lost{{{labels}}} {1 if i in lost else 0}")
        result = (critical or {}).get(i, "OK")
        for severity in ("OK", "WARN", "CRITICAL", "UNKNOWN"):
            value = 1 if severity == result else 0
            lines.append(f'gpudash_health_check_status{{{labels},check_id="ecc.sram",severity="{severity}"}} {value}')
    for severity in ("OK", "WARN", "CRITICAL", "UNKNOWN"):  # a check of the machine itself
        value = 1 if severity == "WARN" else 0
        lines.append(
            f'gpudash_health_check_status{{hostname="{host}",device_key="host",check_id="host.edac",'
            f'severity="{severity}"}} {value}'
        )
    return "\n".join(lines) + "\n"


def hostport(url: str) -> str:
    return url.split("://")[1].split("/")[0]


def one_round(targets, **kwargs):
    scraper = Scraper(targets, timeout_s=10.0, **kwargs)
    try:
        return scraper.round()
    finally:
        scraper.close()


def test_a_page_without_device_series_is_empty_unless_the_host_expects_none(tmp_path):
    with (
        exposition_server(NODE_EXPORTER_PAGE) as (node, _),
        exposition_server(HTML_PAGE) as (html, _),
        exposition_server(gpu_page("gpu1", 2)) as (gpus, _),
    ):
        fleet = one_round(targets_from([hostport(node), hostport(html), hostport(gpus)]))
        status = {h.name: (h.status, h.problems) for h in fleet.hosts}
        assert status["gpu1"] == ("up", [])
        empty = [h for h in fleet.hosts if h.name != "gpu1"]
        assert [h.status for h in empty] == ["empty", "empty"]
        assert all("serves no device series" in h.problems[0] for h in empty)
        assert fleet.summary()["empty"] == 2 and fleet.summary()["up"] == 1
        # The hostfile's column says a host has no GPUs: then it is up.
        hostfile = tmp_path / "hosts"
        hostfile.write_text(f"{hostport(node)}  0   # the login node\n{hostport(gpus)} 2\n")
        fleet = one_round(targets_from([], str(hostfile)))
        assert sorted((h.status, h.expected_gpus, h.problems) for h in fleet.hosts) == [
            ("up", 0, []),
            ("up", 2, []),
        ]


def test_a_lost_gpu_or_fewer_than_expected_is_degraded_and_health_is_the_worst_severity():
    with (
        exposition_server(gpu_page("gpu1", 8, lost=(3,), critical={5: "CRITICAL"})) as (lost, _),
        exposition_server(gpu_page("gpu2", 7)) as (short, _),
    ):
        fleet = one_round(targets_from([hostport(lost), hostport(short)]), expect_gpus=8)
    gpu1, gpu2 = fleet.hosts
    assert (gpu1.status, gpu1.problems) == ("degraded", ["lost GPU: nvidia:3"])
    assert gpu1.health == "CRITICAL" and gpu1.host_checks == {"host.edac": "WARN"}
    by_id = {d.id: d for d in gpu1.devices}
    assert by_id["nvidia:3"].lost is True and by_id["nvidia:0"].lost is False
    assert by_id["nvidia:5"].health == "CRITICAL" and by_id["nvidia:0"].health == "OK"
    assert (gpu2.status, gpu2.problems, gpu2.health) == ("degraded", ["7 GPUs of 8 expected"], "WARN")
    doc = action.document(fleet)
    assert problems("fleet", doc) == []  # gpudash/contracts/fleet.schema.json
    host = doc["hosts"][0]
    assert (host["gpus"], host["expected_gpus"], host["health"]) == (8, 8, "CRITICAL")
    assert host["devices"][5]["health_findings"] == {"ecc.sram": "CRITICAL"}
    assert doc["summary"]["degraded"] == 2


def test_fleet_exits_1_for_a_lost_gpu_in_a_real_serve_and_shows_the_health(tmp_path, capsys):
    """gpudash serve replaying the 8-GPU example with GPU 3 lost and uncorrected ECC on GPU 5."""
    with gpudash_serve("--replay", str(faulty_replay(tmp_path)), "--hostname", "node-f") as (url, _):
        assert main(["fleet", "--hosts", hostport(url), "--timeout", "10"]) == 1
        text = capsys.readouterr().out
        assert "1 degraded" in text and "node-f: degraded: lost GPU: nvidia:3" in text
        row = next(line for line in text.splitlines() if line.startswith("node-f"))
        assert "CRITICAL" in row.split()
        assert "LOST NVIDIA H100" in text
        assert main(["fleet", "--hosts", hostport(url), "--timeout", "10", "--json"]) == 1
        doc = json.loads(capsys.readouterr().out)
        assert problems("fleet", doc) == []
        host = doc["hosts"][0]
        assert host["status"] == "degraded" and host["health"] == "CRITICAL"
        assert [d["id"] for d in host["devices"] if d["lost"]] == ["nvidia:3"]
        assert main(["fleet", "--hosts", hostport(url), "--host", "node-f"]) == 1
        detail = capsys.readouterr().out
        assert "health CRITICAL" in detail and "degraded: lost GPU: nvidia:3" in detail
    with gpudash_serve("--replay", str(DGX), "--hostname", "node-h") as (url, _):
        assert main(["fleet", "--hosts", hostport(url), "--timeout", "10", "--expect-gpus", "8"]) == 0
        assert main(["fleet", "--hosts", hostport(url), "--timeout", "10", "--expect-gpus", "9"]) == 1
        assert "8 GPUs of 9 expected" in capsys.readouterr().out


def test_prometheus_hosts_are_judged_from_the_enum_series_it_keeps(tmp_path):
    """A real Prometheus scraping a host with a lost GPU and a page with no GPU series: the instant query asks
    only for the health series that are 1, and keeps their names."""
    with (
        exposition_server(gpu_page("gpu1", 2, lost=(1,), critical={0: "WARN"})) as (gpus, _),
        exposition_server(NODE_EXPORTER_PAGE) as (other, _),
        prometheus(tmp_path, [hostport(gpus), hostport(other)]) as base,
    ):
        source = PrometheusSource(base, timeout_s=5.0)
        try:
            deadline = time.monotonic() + 30
            while True:
                fleet = source.round()
                hosts = {h.name: h for h in fleet.hosts}
                scraped = all(h.status not in ("unreachable", "stale") for h in fleet.hosts)  # both scraped once
                if "gpu1" in hosts and hosts["gpu1"].devices and len(hosts) == 2 and scraped:
                    break
                assert time.monotonic() < deadline, [(h.name, h.status) for h in fleet.hosts]
                time.sleep(0.3)
        finally:
            source.close()
    gpu1 = hosts.pop("gpu1")
    assert (gpu1.status, gpu1.problems, gpu1.health) == ("degraded", ["lost GPU: nvidia:1"], "WARN")
    assert gpu1.devices[0].health_checks == {"ecc.sram": "WARN"}
    (other_host,) = hosts.values()
    assert other_host.status == "empty"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("node1 eight", "hosts:1: expected GPUs 'eight': expected a whole number from 0 to 1024"),
        ("node1 -1", "hosts:1: expected GPUs '-1'"),
        ("node1 8 extra", "hosts:1: 'node1 8 extra': expected ENDPOINT [GPUS]"),
    ],
)
def test_a_bad_hostfile_column_is_one_line_and_exit_2(tmp_path, line, message, capsys):
    hostfile = tmp_path / "hosts"
    hostfile.write_text(line + "\n")
    with pytest.raises(UsageError, match="hosts:1: "):
        targets_from([], str(hostfile))
    assert main(["fleet", "--hostfile", str(hostfile)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_bad_expect_gpus_is_exit_2(capsys):
    assert main(["fleet", "--hosts", "127.0.0.1:9", "--expect-gpus", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--expect-gpus: expected a count from 0 to 1024, got -1" in err and len(err.splitlines()) == 1


def test_prometheus_at_scale_reads_batch_results_once_a_minute_and_paces_to_the_scrape_interval():
    """benchmarks/fleet_sim.py's simulated Prometheus API (8 hosts here; the benchmark runs 1,024): the second
    round asks no batch query yet still shows the recommendation and verdicts; health is OK where a GPU's
    checks ran and no finding says otherwise, WARN where one does; the pace is the targets' scrape interval."""
    import sys

    from servers import REPO

    sys.path.insert(0, str(REPO / "benchmarks"))
    from fleet_sim import prometheus_api

    port, series = prometheus_api(8)
    source = PrometheusSource(f"http://127.0.0.1:{port}", timeout_s=10.0)
    try:
        first = source.round()
        asked = []
        real_api = source._api

        async def counted(path, **params):
            asked.append(params.get("query", path))
            return await real_api(path, **params)

        source._api = counted  # type: ignore[method-assign]
        second = source.round()
    finally:
        source.close()
    assert not any("precision_verified" in q for q in asked) and any("DCGM_FI_DEV_GPU_UTIL" in q for q in asked)
    for fleet in (first, second):
        assert fleet.summary()["up"] == 8 and fleet.summary()["devices"] == 64
        gpu = fleet.hosts[0].devices[0]
        assert gpu.amp_dtype == "bfloat16" and gpu.verified.get("bf16") is True and gpu.health == "OK"
        assert sorted(gpu.sources) == ["dcgm", "gpudash"]
        warned = [h for h in fleet.hosts if h.health == "WARN"]
        assert [(h.name, [d.id for d in h.devices if d.health == "WARN"]) for h in warned] == [
            ("sim-0007", ["nvidia:3"])
        ]
    assert source.interval_s == 15.0 and series > 64 * 30


def test_prometheus_rounds_slow_down_to_keep_within_their_share_of_a_core(monkeypatch):
    """Through Prometheus the pace is the targets' scrape interval, or longer while a round costs more CPU than
    CPU_SHARE of it (the mean of the last rounds, the first left out): at 1,024 hosts on a slow VM a round took
    0.9 s of CPU, 6 % of a core at 15 s. Rounds that get cheap again go back to the scrape interval."""
    import sys

    from servers import REPO

    from gpudash.fleet import prometheus
    from gpudash.fleet.interval import CPU_SHARE, within_cpu_share

    assert within_cpu_share(15.0, 0.5) == 15.0 and within_cpu_share(15.0, 1.5) == 1.5 / CPU_SHARE
    sys.path.insert(0, str(REPO / "benchmarks"))
    from fleet_sim import prometheus_api

    port, _ = prometheus_api(8)
    source = PrometheusSource(f"http://127.0.0.1:{port}", timeout_s=10.0)
    costs = iter([5.0, 0.0, 2.0, 2.0, 2.0])  # each round's CPU: the first's (imports) is left out
    reads = [0.0, 0]  # the clock, and how often it was read: at each round's start and its end

    def process_time() -> float:
        reads[1] += 1
        if reads[1] % 2 == 0:  # a round's end: its cost has passed
            reads[0] += next(costs, 0.0)
        return reads[0]

    monkeypatch.setattr(prometheus, "process_time", process_time)
    try:
        source.round()
        assert source.interval_s == 15.0  # 5 s of CPU, but the first round's cost is left out
        source.round()
        assert source.interval_s == 15.0  # a free round: the scrape interval
        source.round()
        assert source.interval_s == pytest.approx(1.0 / CPU_SHARE)  # the mean of 0 and 2 s a round: 22 s
        source.round()
        source.round()
        assert source.interval_s == pytest.approx(1.5 / CPU_SHARE)  # 0, 2, 2, 2: 33 s
        for _ in range(4):
            source.round()  # free again: the last four leave the window
        assert source.interval_s == 15.0
    finally:
        source.close()
