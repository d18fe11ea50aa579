"""The memory of bad GPUs reaches the fleet: `gpudash check` remembers a failed check per GPU UUID,
`gpudash serve` publishes it (gpudash_health_failed_before_*), and `gpudash fleet` says "this GPU failed <id> on
<date>" under its host, for a GPU the host no longer has too, and on the host a remembered board has moved to."""

from __future__ import annotations

import sys
import time

from conftest import H100, make_fake_pynvml
from prometheus_client import generate_latest
from servers import exposition_server

from gpudash import strict_json
from gpudash.cli import main
from gpudash.config import defaults
from gpudash.contracts.validation import problems
from gpudash.devices import discover
from gpudash.exporter import registry_for

BAD = "GPU-11111111-2222-3333-4444-555555555555"
GONE = "GPU-99999999-2222-3333-4444-555555555555"
GPU1 = dict(H100, index=1, uuid=BAD, pci_bus_id="00000000:18:00.0")
ECC = {"ecc": {"volatile_sram_uncorrected": 2}}


def use_gpus(monkeypatch, gpus) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(list(gpus)))
    monkeypatch.setitem(sys.modules, "amdsmi", None)


def check_with(monkeypatch, capsys, tmp_path, gpus) -> int:
    log = tmp_path / "kmsg"
    log.write_text("")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[health]\nkernel_log = '{log}'\n")
    use_gpus(monkeypatch, gpus)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "none")
    code = main(["--config", str(cfg), "check"])
    capsys.readouterr()
    return code


def served_page(monkeypatch, gpus, hostname: str) -> str:
    use_gpus(monkeypatch, gpus)
    machine = discover(include_torch=False)
    try:
        registry, _ = registry_for(machine, defaults(), hostname=hostname)
        return generate_latest(registry).decode()
    finally:
        machine.close()


def fleet_json(capsys, *urls: str) -> dict:
    code = main(["fleet", "--hosts", ",".join(urls), "--json", "--timeout", "10"])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    data = strict_json.loads(out)
    assert problems("fleet", data) == []
    return data


def test_fleet_says_which_gpu_failed_which_check_and_when(monkeypatch, capsys, tmp_path, state_dir):
    gone = dict(H100, index=2, uuid=GONE, pci_bus_id="00000000:2A:00.0")
    assert check_with(monkeypatch, capsys, tmp_path, [H100, dict(GPU1, health=ECC), dict(gone, health=ECC)]) == 1
    # Now healthy, and the third board pulled: the memory outlives both.
    page = served_page(monkeypatch, [H100, GPU1], "node-a")
    assert f'UUID="{BAD}"' in page and "gpudash_health_failed_before_timestamp_seconds" in page
    assert f'UUID="{GONE}"' in page  # no device labels: node-a has no such GPU now

    with exposition_server(page) as (url, _):
        fleet = fleet_json(capsys, url)
        [host] = fleet["hosts"]
        by_id = {d["id"]: d for d in host["devices"]}
        assert by_id["nvidia:0"]["failed_before"] == []
        [failed] = by_id["nvidia:1"]["failed_before"]
        today = time.strftime("%Y-%m-%d")
        assert (failed["uuid"], failed["check_id"], failed["severity"], failed["sightings"], failed["date"]) == (
            BAD,
            "gpu.ecc.sram_uncorrected",
            "CRITICAL",
            1,
            today,
        )
        assert host["health"] == "OK"  # history, not a finding: the host stays up
        assert host["status"] == "up"
        absent = [f for f in host["failed_before"] if f["device"] is None]
        assert [(f["uuid"], f["check_id"]) for f in absent] == [(GONE, "gpu.ecc.sram_uncorrected")]

        assert main(["fleet", "--hosts", url, "--timeout", "10"]) == 0
        table = capsys.readouterr().out
        assert f"failed before: node-a nvidia:1 {BAD} failed gpu.ecc.sram_uncorrected (CRITICAL) on {today}" in table
        assert main(["fleet", "--hosts", url, "--timeout", "10", "--host", "node-a"]) == 0
        detail = capsys.readouterr().out
        assert f"nvidia:1 {BAD} failed gpu.ecc.sram_uncorrected (CRITICAL) on {today}, seen 1 time" in detail
        assert f"{GONE} (not on this host now) failed gpu.ecc.sram_uncorrected (CRITICAL) on {today}" in detail


def test_a_board_that_failed_on_one_host_is_recognised_on_another(monkeypatch, capsys, tmp_path, state_dir):
    check_with(monkeypatch, capsys, tmp_path, [dict(GPU1, index=0, health=ECC)])
    node_a = served_page(monkeypatch, [H100], "node-a")  # the board was pulled from node-a ...
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-state"))  # ... and node-b remembers nothing
    node_b = served_page(monkeypatch, [GPU1], "node-b")  # ... and put into node-b
    assert "gpudash_health_failed_before" not in node_b

    with exposition_server(node_a) as (url_a, _), exposition_server(node_b) as (url_b, _):
        fleet = fleet_json(capsys, url_a, url_b)
        hosts = {h["host"]: h for h in fleet["hosts"]}
        [moved] = [d for d in hosts["node-b"]["devices"] if d["vendor"] == "nvidia"]
        assert [(f["check_id"], f["host"], f["device"]) for f in moved["failed_before"]] == [
            ("gpu.ecc.sram_uncorrected", "node-a", None)
        ]
        assert main(["fleet", "--hosts", f"{url_a},{url_b}", "--timeout", "10"]) == 0
        out = capsys.readouterr().out
        assert f"failed before: node-b nvidia:0 {BAD} failed gpu.ecc.sram_uncorrected (CRITICAL) on " in out
        assert "on node-a" in out


def test_a_healthy_fleet_carries_no_failed_before_series(monkeypatch, state_dir):
    page = served_page(monkeypatch, [H100, GPU1], "node-a")
    assert "gpudash_health_failed_before" not in page  # no series, not even an empty family


def test_through_prometheus_the_memory_reaches_the_fleet_too(monkeypatch, capsys, tmp_path, state_dir):
    from servers import prometheus

    from gpudash.fleet.prometheus import PrometheusSource

    check_with(monkeypatch, capsys, tmp_path, [H100, dict(GPU1, health=ECC)])
    page = served_page(monkeypatch, [H100, GPU1], "node-a")
    with exposition_server(page) as (url, _), prometheus(tmp_path, [url.removeprefix("http://")]) as base:
        source = PrometheusSource(base, timeout_s=5.0)
        try:
            deadline = time.monotonic() + 30
            while True:  # until Prometheus has scraped the page once
                hosts = {h.name: h for h in source.round().hosts}
                if "node-a" in hosts and hosts["node-a"].devices:
                    break
                assert time.monotonic() < deadline, list(hosts)
                time.sleep(0.3)
        finally:
            source.close()
    gpu1 = next(d for d in hosts["node-a"].devices if d.uuid == BAD)
    assert [(f.check_id, f.severity, f.sightings, f.host) for f in gpu1.failed_before] == [
        ("gpu.ecc.sram_uncorrected", "CRITICAL", 1, "node-a")
    ]
