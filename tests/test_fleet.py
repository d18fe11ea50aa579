"""The fleet: endpoints scraped directly (gpudash serve, dcgm-exporter's format), bounded rounds, a host
that is down or slow, the headless command, the JSON document and the dashboard's Fleet view."""

from __future__ import annotations

import json
import time

import pytest
from servers import DGX, REPO, dcgm_page, exposition_server, free_port, gpudash_serve

from gpudash.actions import fleet as action
from gpudash.cli import main
from gpudash.config import defaults
from gpudash.contracts.validation import problems
from gpudash.errors import UsageError
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import parse_target, targets_from

pytestmark = pytest.mark.light
MI300X = REPO / "examples" / "snapshots" / "mi300x.json"


def hostport(url: str) -> str:
    return url.split("://")[1].split("/")[0]


@pytest.fixture(scope="module")
def two_nodes():
    """Two gpudash endpoints replaying a DGX H100 (node-a) and an MI300X (node-b)."""
    with (
        gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (a, _),
        gpudash_serve("--replay", str(MI300X), "--hostname", "node-b") as (b, _),
    ):
        yield hostport(a), hostport(b)


def test_fleet_table_shows_every_host_and_names_the_one_that_is_down(two_nodes, capsys):
    down = f"127.0.0.1:{free_port()}"
    code = main(["fleet", "--hosts", ",".join([*two_nodes, down])])
    out = capsys.readouterr().out
    assert code == 1  # a host is not up
    lines = out.splitlines()
    assert lines[0].startswith("fleet from 3 endpoints · 3 hosts: 2 up, 1 unreachable · 9 devices")
    row = next(line for line in lines if line.startswith(down))
    assert "unreachable" in row and "connection refused" in row
    assert sum(1 for line in lines if "nvidia:" in line and "NVIDIA H100 80GB HBM3" in line) == 8
    assert any(line.startswith("node-b") and "AMD Instinct MI300X" in line for line in lines)
    assert "up (replayed)" in out  # a replayed endpoint is never passed off as hardware


def test_fleet_json_and_drill_down(two_nodes, capsys):
    assert main(["fleet", "--hosts", ",".join(two_nodes), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert problems("fleet", doc) == []  # gpudash/contracts/fleet.schema.json
    assert doc["summary"] == {
        "hosts": 2,
        "up": 2,
        "degraded": 0,
        "empty": 0,
        "stale": 0,
        "unreachable": 0,
        "devices": 9,
    }
    a = next(h for h in doc["hosts"] if h["host"] == "node-a")
    gpu = a["devices"][3]
    assert gpu["id"] == "nvidia:3" and gpu["uuid"].startswith("GPU-") and gpu["sources"] == ["gpudash"]
    assert 0 <= gpu["utilization_ratio"] <= 1 and gpu["memory_total_bytes"] == 85520809984
    assert gpu["amp_dtype"] == "bfloat16"
    assert main(["fleet", "--hosts", ",".join(two_nodes), "--host", "node-b"]) == 0
    detail = capsys.readouterr().out
    assert detail.startswith("node-b: up (replayed)") and "AMD Instinct MI300X" in detail and "gpudash" in detail
    assert main(["fleet", "--hosts", ",".join(two_nodes), "--host", "node-z"]) == 2  # bad argument
    assert "--host node-z: not in the fleet (hosts: node-a, node-b)" in capsys.readouterr().err


def test_a_slow_host_is_dropped_from_the_round_not_waited_for(two_nodes):
    with exposition_server("", delay_s=5.0) as (slow, _):
        targets = targets_from([*two_nodes, hostport(slow)])
        scraper = Scraper(targets, timeout_s=1.0, stale_after_s=10)
        try:
            t0 = time.monotonic()
            fleet = scraper.round()
            took = time.monotonic() - t0
            assert took < 2.0, took  # the round's deadline, not the slow host's 5 s
            assert fleet.dropped == [hostport(slow)]
            slow_host = fleet.host(hostport(slow))
            assert slow_host.status == "unreachable" and "dropped from this round" in slow_host.error
            assert {h.name: h.status for h in fleet.hosts if h.name.startswith("node")} == {
                "node-a": "up",
                "node-b": "up",
            }
            t0 = time.monotonic()
            again = scraper.round()  # the slow request is still out: not sent twice, not waited for
            assert time.monotonic() - t0 < 2.0 and again.dropped == [hostport(slow)]
        finally:
            scraper.close()


def test_a_host_that_goes_away_turns_stale_then_unreachable(tmp_path):
    page = {"text": dcgm_page(DGX, "node-c")}
    with exposition_server(lambda path: page["text"]) as (url, _):
        scraper = Scraper(targets_from([hostport(url)]), timeout_s=1.0, stale_after_s=1.5)
        try:
            first = scraper.round().hosts[0]
            assert (first.name, first.status, len(first.devices)) == ("node-c", "up", 8)
            page["text"] = 'DCGM_FI_DEV_GPU_UTIL{gpu="0" 5\n'  # a broken page
            second = scraper.round().hosts[0]
            assert second.status == "stale" and "not a Prometheus metrics page" in second.error
            assert len(second.devices) == 8  # the last values, marked stale
            time.sleep(1.6)
            third = scraper.round().hosts[0]
            assert (third.name, third.status, third.devices) == ("node-c", "unreachable", [])
        finally:
            scraper.close()


def test_closing_with_requests_still_queued_prints_no_traceback(caplog):
    """A round that ends at its deadline with requests still waiting for a worker, then the view closes: the
    queued requests are cancelled quietly (before, each cancelled one logged a CancelledError traceback)."""
    with exposition_server(lambda path: dcgm_page(DGX, "node-q"), delay_s=0.5) as (url, _):
        scraper = Scraper(targets_from([f"{url}/metrics/h{i}" for i in range(6)]), concurrency=1, timeout_s=0.2)
        try:
            fleet = scraper.round()
        finally:
            scraper.close()
        time.sleep(0.6)  # the one request in flight finishes after close
    assert len(fleet.dropped) == 6
    assert not [r for r in caplog.records if r.name == "concurrent.futures"], caplog.text


def test_dcgm_and_gpudash_series_of_one_host_merge_on_uuid(two_nodes):
    """node-a runs dcgm-exporter and gpudash serve: one host, eight GPUs, dcgm's readings, gpudash's verdicts."""
    with exposition_server(dcgm_page(DGX, "node-a", util=88.0)) as (dcgm, _):
        fleet, _ = action.one_round(action.spec_from(defaults(), hosts=[two_nodes[0], hostport(dcgm)]))
    (host,) = fleet.hosts
    assert host.name == "node-a" and host.status == "up" and len(host.targets) == 2
    assert len([d for d in host.devices if d.mig_instance is None]) == 8  # and GPU 7's MIG instances under it
    gpu = host.devices[0]
    assert gpu.sources == ["gpudash", "dcgm"] or gpu.sources == ["dcgm", "gpudash"]
    assert gpu.utilization_ratio == pytest.approx(0.88)  # the vendor exporter's reading wins
    assert gpu.memory_used_bytes == 40960 * 2**20
    assert gpu.memory_total_bytes == (40960 + 40000 + 595) * 2**20  # used + free + reserved, MiB -> bytes
    assert gpu.amp_dtype == "bfloat16"  # only gpudash knows this


def test_at_most_the_concurrency_limit_is_in_flight():
    with exposition_server(lambda path: dcgm_page(DGX, path.split("/")[2].split("?")[0]), delay_s=0.05) as (url, stats):
        targets = targets_from([f"{url}/metrics/h{i}" for i in range(40)])
        scraper = Scraper(targets, concurrency=8, timeout_s=10)
        try:
            fleet = scraper.round()
        finally:
            scraper.close()
    assert stats["requests"] == 40 and stats["most"] <= 8
    assert len(fleet.hosts) == 40 and all(h.status == "up" for h in fleet.hosts)


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("node1", "http://node1:9483/metrics"),
        ("node1:9400", "http://node1:9400/metrics"),
        ("https://node1:9483", "https://node1:9483/metrics"),
        ("http://10.0.0.5:5000/metrics", "http://10.0.0.5:5000/metrics"),
        ("[::1]:9483", "http://[::1]:9483/metrics"),
    ],
)
def test_targets_as_users_write_them(text, url):
    assert parse_target(text, "--hosts").url == url


def test_hostfile_comments_duplicates_and_errors(tmp_path):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# lab\nnode1:9483   # the big one\n\nnode2\nnode1:9483\n")
    assert [t.label for t in targets_from(["node3"], str(hostfile))] == ["node3", "node1:9483", "node2"]
    hostfile.write_text("node1\nftp://node2\n")
    with pytest.raises(UsageError, match=r"hosts:2: 'ftp://node2': expected HOST\[:PORT\]"):
        targets_from([], str(hostfile))
    with pytest.raises(UsageError, match="at most 1000"):
        targets_from([",".join(f"n{i}" for i in range(1001))])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fleet"], "no fleet to show: pass --prometheus URL, --hosts"),
        (["fleet", "--hosts", "a", "--concurrency", "500"], "--concurrency: expected 1 to 128"),
        (["fleet", "--hostfile", "/no/such/file"], "/no/such/file: hostfile not found"),
        (["fleet", "--prometheus", "ftp://x"], "--prometheus: 'ftp://x': expected HOST[:PORT]"),
    ],
)
def test_bad_fleet_options_give_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_label_sets_are_parsed_by_prometheus_client_once_and_exactly():
    from gpudash.fleet.exposition import SeriesCache, parse

    cache = SeriesCache()
    tricky = 'gpudash_device_info{device_key="cpu:0",name="odd } name \\"quoted\\" \\\\ back"} 1 1700000000000\n'
    plain = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 97\nDCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} +Inf\n'
    ((series, value),) = parse(tricky, cache=cache)
    assert (series.name, value) == ("gpudash_device_info", 1.0)
    assert series.labels == {"device_key": "cpu:0", "name": 'odd } name "quoted" \\ back'}
    assert series.device is not None and series.device.key == "cpu:0"
    util, temp = parse(plain, cache=cache)
    assert util[0].labels is temp[0].labels  # one label set, parsed once
    assert util[1] == 97.0 and temp[1] == float("inf")
    again, _ = parse(plain.replace("97", "12"), cache=cache)
    assert again[0] is util[0] and again[1] == 12.0  # a series seen before is looked up, its value read anew
    small = SeriesCache(limit=2)
    parse(tricky + plain, cache=small)
    assert len(small._series) <= 2 and len(small._labels) <= 2  # bounded, whatever a host sends
    with pytest.raises(ValueError):
        parse('DCGM_FI_DEV_GPU_UTIL{gpu="0 97\n', cache=SeriesCache())
    with pytest.raises(ValueError):
        parse('DCGM_FI_DEV_GPU_UTIL{gpu="0"}\n', cache=SeriesCache())


def test_prometheus_that_cannot_be_reached_is_one_line_and_exit_3(capsys):
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["fleet", "--prometheus", url, "--timeout", "2"]) == 3  # could not do its job
    err = capsys.readouterr().err.strip()
    assert err == f"gpudash: error: Prometheus at {url}: connection refused"


def test_an_answer_in_before_the_deadline_is_never_counted_as_dropped():
    """The round's wait returns once the answers are in, possibly before their done-callbacks have run (here
    each callback is made slow): the round must take in every answer that arrived, not call it dropped, and a
    late callback must not undo or repeat it."""
    import threading

    class LaggingCallbacks(Scraper):
        def _landed(self, endpoint, batch, future):
            if threading.current_thread() is not threading.main_thread():
                time.sleep(0.3)  # the callback is slow (it runs on the fleet's event-loop thread)
            super()._landed(endpoint, batch, future)

    with exposition_server(dcgm_page(DGX, "node-a")) as (url, _):
        scraper = LaggingCallbacks([parse_target(hostport(url), "--hosts")], timeout_s=4)
        try:
            first = scraper.round()
            assert first.dropped == [] and [h.status for h in first.hosts] == ["up"]
            time.sleep(0.4)  # the late callback must not undo or repeat what the round took in
            assert scraper.round().dropped == []
        finally:
            scraper.close()


def test_a_hostile_exporter_cannot_break_the_table_the_json_or_the_terminal(capsys):
    """Another machine's exporter is outside gpudash's control: NaN, infinite or absurd readings are no readings,
    and escape sequences in its labels are shown as escapes (no retitled or recoloured terminal)."""
    labels = 'gpu="0",UUID="GPU-1",modelName="X\x1b[31mred",Hostname="h\x1b]0;pwned\x07"'
    page = "".join(
        f"{name}{{{labels}}} {value}\n"
        for name, value in (
            ("DCGM_FI_DEV_GPU_UTIL", "NaN"),
            ("DCGM_FI_DEV_GPU_TEMP", "+Inf"),
            ("DCGM_FI_DEV_POWER_USAGE", "-5"),
            ("DCGM_FI_DEV_FB_USED", "1e300"),
        )
    )
    with exposition_server(page) as (url, _):
        assert main(["fleet", "--hosts", hostport(url), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)  # strict JSON: no NaN or Infinity
        assert problems("fleet", doc) == []
        (host,) = doc["hosts"]
        (gpu,) = host["devices"]
        readings = ("utilization_ratio", "temperature_celsius", "power_watts", "memory_used_bytes")
        assert [gpu[k] for k in readings] == [None] * 4
        assert host["host"] == "h\\x1b]0;pwned\\x07" and gpu["name"] == "X\\x1b[31mred"
        assert main(["fleet", "--hosts", hostport(url)]) == 0
        table = capsys.readouterr().out
    assert "\x1b" not in table and "\x07" not in table and "nan" not in table.lower()
