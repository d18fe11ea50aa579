"""`gpudash serve`'s health series (verdicts per check ID and device, raw counters, a lost GPU) and the alert
rules of examples/prometheus/alerts.yml: checked by promtool, then run in Debian's Prometheus on 127.0.0.1
against `gpudash serve` on this healthy CPU (no alert, not even pending, though its probe failed tf32 and fp4,
precisions it lacks) and on a replay with a lost GPU and planted faults (the alerts fire and name the GPU)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
from contextlib import contextmanager

from conftest import H100, make_fake_pynvml
from fakes import real_pynvml
from health_snapshots import faulty_replay
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, REPO, binary_or_skip, free_port, get, gpudash_serve, stop, wait_for

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for

ALERTS = REPO / "examples" / "prometheus" / "alerts.yml"
GPU1 = dict(H100, index=1, uuid="GPU-11111111-2222-3333-4444-555555555555", pci_bus_id="00000000:18:00.0")
GPU2 = dict(H100, index=2, uuid="GPU-22222222-2222-3333-4444-555555555555", pci_bus_id="00000000:2A:00.0")


def scrape_text(registry) -> list:
    from prometheus_client import generate_latest

    text = generate_latest(registry).decode()
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


def pick(samples, name, **labels):
    return [s for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]


def test_serve_publishes_verdicts_counters_and_a_lost_gpu(monkeypatch):
    faulty = dict(
        GPU1,
        health={
            "ecc": {"volatile_sram_uncorrected": 2, "aggregate_dram_corrected": 7},
            "clock_event_reasons": 0x40 | 0x1,  # hw thermal
            "pcie": {"gen": 4, "max_gen": 5, "width": 8, "max_width": 16},
            "xids": [79],
        },
    )
    errors = {(2, "handle"): real_pynvml.NVMLError_GpuIsLost()}
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, faulty, GPU2], errors=errors))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = discover(include_torch=False)
    try:
        registry, _ = registry_for(machine, defaults(), hostname="node-a")
        s = scrape_text(registry)
    finally:
        machine.close()

    def status(device, check_id):
        found = {
            x.labels["severity"]: x.value
            for x in pick(s, "gpudash_health_check_status", device_key=device, check_id=check_id)
        }
        return next((k for k, v in found.items() if v == 1), None), sorted(found)

    assert status("nvidia:0", "gpu.ecc.sram_uncorrected") == ("OK", ["CRITICAL", "OK", "UNKNOWN", "WARN"])
    assert status("nvidia:1", "gpu.ecc.sram_uncorrected")[0] == "CRITICAL"
    assert status("nvidia:1", "gpu.pcie.width")[0] == "CRITICAL"
    assert status("nvidia:1", "gpu.clock_events")[0] == "WARN"
    assert status("nvidia:1", "gpu.xid.events")[0] == "CRITICAL"
    assert status("nvidia:2", "gpu.lost")[0] == "CRITICAL"
    assert status("nvidia:0", "gpu.retired_pages") == (None, [])  # not applicable: no series at all
    action = pick(s, "gpudash_health_check_action_info", device_key="nvidia:1", check_id="gpu.xid.events")
    assert [a.labels["action"] for a in action] == ["reboot"]  # XID 79: fallen off the bus
    assert {x.labels["device_key"]: x.value for x in pick(s, "gpudash_device_lost")} == {
        "nvidia:0": 0,
        "nvidia:1": 0,
        "nvidia:2": 1,
    }
    one = {"device_key": "nvidia:1", "gpu": "1", "UUID": GPU1["uuid"], "hostname": "node-a"}
    ecc = pick(s, "gpudash_device_ecc_errors_total", **one, location="sram", error_type="uncorrected")
    assert [(e.labels["counter"], e.value) for e in ecc] == [("volatile", 2), ("aggregate", 0)]
    assert (
        pick(s, "gpudash_device_ecc_errors_total", **one, counter="aggregate", location="dram", error_type="corrected")[
            0
        ].value
        == 7
    )
    assert pick(s, "gpudash_device_pcie_link_width", **one)[0].value == 8
    assert pick(s, "gpudash_device_pcie_link_width_max", **one)[0].value == 16
    assert pick(s, "gpudash_device_pcie_link_generation", **one)[0].value == 4
    assert pick(s, "gpudash_device_clock_event_active", **one, reason="hw_thermal")[0].value == 1
    assert pick(s, "gpudash_device_clock_event_active", **one, reason="hw_slowdown")[0].value == 0
    assert pick(s, "gpudash_device_xid_events", **one)[0].value == 1
    assert pick(s, "gpudash_device_last_xid", **one)[0].value == 79
    assert pick(s, "gpudash_device_energy_joules_total", **one)[0].value == 123_456.789
    assert pick(s, "gpudash_device_remapped_rows", **one, cause="uncorrected")[0].value == 0
    assert not pick(s, "gpudash_device_ecc_errors_total", device_key="nvidia:2")  # lost: nothing read


def test_the_counters_are_read_once_per_interval_not_per_scrape():
    from gpudash.exporter.health_cache import HealthCache

    reads = []

    class Machine:
        replayed, devices, hidden = True, [], []
        health_readers = {"nvidia:0": lambda: reads.append(1) or {"counters": {}, "unavailable": {}}}

    now = [100.0]
    cache = HealthCache(Machine(), {"health": {"read_interval_s": 30.0}}, clock=lambda: now[0])
    for step in (0, 10, 29.9):
        now[0] = 100 + step
        cache.current()
    assert len(reads) == 1
    now[0] = 130.0
    cache.current()
    assert len(reads) == 2


def test_a_bad_read_interval_is_one_line(tmp_path, capsys):
    from gpudash.cli import main

    cfg = tmp_path / "c.toml"
    cfg.write_text("[health]\nread_interval_s = 0\n")
    assert main(["--config", str(cfg), "info"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "read_interval_s" in err[0], err


def test_promtool_accepts_the_rules():
    promtool = binary_or_skip("promtool")
    done = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 4 rules found" in done.stdout


@contextmanager
def prometheus_with_rules(tmp_path, targets):
    binary = binary_or_skip("prometheus")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    listed = ", ".join(f"'{t}'" for t in targets)
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
        f"rule_files: ['{ALERTS}']\n"
        f"scrape_configs:\n  - job_name: gpudash\n    static_configs:\n      - targets: [{listed}]\n"
    )
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--web.listen-address=127.0.0.1:{port}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/-/ready", timeout=20.0, proc=proc)
        yield base
    finally:
        stop(proc)


def api(base, path, **params):
    data = json.loads(get(f"{base}/api/v1/{path}" + ("?" + urllib.parse.urlencode(params) if params else "")))
    assert data["status"] == "success", data
    return data["data"]


def wait_until(what, condition, timeout=40.0):
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def last_evaluation(base) -> float:
    from datetime import datetime

    groups = api(base, "rules")["groups"]
    stamp = groups[0]["lastEvaluation"]  # RFC 3339 with nanoseconds
    head, _, frac = stamp.partition(".")
    zone = frac.lstrip("0123456789")
    return datetime.fromisoformat(head + zone.replace("Z", "+00:00")).timestamp()


def test_alerts_fire_on_real_faults_only_in_a_real_prometheus(tmp_path):
    # This CPU's probe of two precisions it lacks: both fail, as they should (docs/fleet.md's old rule fired here).
    probe = subprocess.run(
        [sys.executable, "-m", "gpudash", "probe", "--device", "cpu:0", "--precision", "tf32,fp4", "--json"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    with (
        gpudash_serve("--hostname", "healthy-cpu") as (live, _),
        gpudash_serve("--replay", str(faulty_replay(tmp_path)), "--hostname", "faulty-dgx") as (bad, _),
        prometheus_with_rules(tmp_path, [urllib.parse.urlsplit(u).netloc for u in (live, bad)]) as base,
    ):

        def firing():
            alerts = [a for a in api(base, "alerts")["alerts"] if a["state"] == "firing"]
            names = {
                (a["labels"]["alertname"], a["labels"].get("device_key"), a["labels"].get("check_id")) for a in alerts
            }
            want = {
                ("GPULost", "nvidia:3", None),
                ("GPUHealthCritical", "nvidia:3", "gpu.lost"),
                ("GPUHealthCritical", "nvidia:5", "gpu.ecc.sram_uncorrected"),
            }
            return alerts if want <= names else None

        alerts = wait_until("the faulty replay's alerts", firing)
        lost = next(a for a in alerts if a["labels"]["alertname"] == "GPULost")
        assert lost["labels"]["gpu"] == "3" and lost["labels"]["hostname"] == "faulty-dgx"
        assert (
            lost["annotations"]["summary"].startswith("GPU 3 (GPU-")
            and "lost on faulty-dgx" in lost["annotations"]["summary"]
        )
        ecc = next(a for a in alerts if a["labels"].get("check_id") == "gpu.ecc.sram_uncorrected")
        assert ecc["labels"]["UUID"] == json.loads(DGX.read_text())["devices"][5]["uuid"]
        assert all(a["labels"]["hostname"] == "faulty-dgx" for a in alerts)

        # The healthy CPU: its series are in, the rules have run over them since, and nothing is even pending.
        old_rule = wait_until(
            "the CPU's failed probe of precisions it lacks",
            lambda: api(base, "query", query='gpudash_precision_verified{hostname="healthy-cpu"} == 0')["result"],
        )
        assert {r["metric"]["precision"] for r in old_rule} == {"tf32", "fp4"}  # the old rule's matches
        wait_until(
            "the CPU's health series",
            lambda: api(base, "query", query='gpudash_health_check_status{hostname="healthy-cpu"}')["result"],
        )
        seen = time.time()
        wait_until("two rule evaluations over them", lambda: last_evaluation(base) > seen + 1.0)
        mine = [a for a in api(base, "alerts")["alerts"] if a["labels"].get("hostname") == "healthy-cpu"]
        assert mine == [], mine
        assert api(base, "query", query='ALERTS{alertname="PrecisionFailsOnGPU"}')["result"] == []
        assert all(r["health"] == "ok" for g in api(base, "rules")["groups"] for r in g["rules"])
