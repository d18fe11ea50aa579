"""`gpudash serve` and its metrics: served over real HTTP(S) and parsed with prometheus_client's parser."""

from __future__ import annotations

import os
import ssl
import stat
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, REPO, get, gpudash_serve, self_signed_certificate, threads_of

from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for
from gpudash.measure.bench.store import append_run
from gpudash.measure.probe import remember
from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
from gpudash.plugin_manager.remembered import remember_checks

pytestmark = pytest.mark.light

NVIDIA_JOIN = {"gpu", "UUID", "pci_bus_id", "modelName", "hostname"}


def samples(text: str) -> list:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def named(text: str, name: str) -> list:
    return [s for s in samples(text) if s.name == name]


def scrape(registry) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry).decode()


# A replayed 8-GPU node, served the way Prometheus sees it ------------------------------------------------


def test_replayed_dgx_is_served_with_labels_that_join_dcgm_exporter():
    with gpudash_serve("--replay", str(DGX)) as (url, _):
        assert url.startswith("http://127.0.0.1:")
        text = get(url)
    info = named(text, "gpudash_device_info")
    assert len(info) == 8
    for s in info:
        assert set(s.labels) >= NVIDIA_JOIN, s.labels
        assert s.labels["UUID"].startswith("GPU-") and s.labels["modelName"] == "NVIDIA H100 80GB HBM3"
    assert {s.labels["gpu"] for s in info} == {str(i) for i in range(8)}
    every_label = {k for s in samples(text) for k in s.labels}
    assert not every_label & {"instance", "job", "Hostname"}
    assert all(s.name.startswith("gpudash_") for s in samples(text))
    machine = named(text, "gpudash_machine_info")[0].labels
    assert machine["replayed"] == "true" and machine["source"].startswith("replayed from dgx-h100-8gpu.json")
    native = {(s.labels["gpu"], s.labels["precision"]): s.value for s in named(text, "gpudash_precision_spec_native")}
    assert native[("3", "bf16")] == 1 and native[("3", "fp8_e4m3")] == 1 and native[("3", "fp4")] == 0
    assert named(text, "gpudash_precision_verified") == []  # a replay ran nothing: absent, never 0
    util = named(text, "gpudash_device_utilization_ratio")
    # GPU 7 runs MIG instances: NVML gives no whole-GPU utilization there, so it publishes none (not a 0).
    assert len(util) == 7 and all(0 <= s.value <= 1 for s in util)
    temps = named(text, "gpudash_device_temperature_celsius")
    assert all(20 <= s.value <= 100 for s in temps)
    assert all(s.value > 1e8 for s in named(text, "gpudash_device_sm_clock_hertz"))  # MHz became Hz
    peaks = {
        s.labels["precision"]: s for s in named(text, "gpudash_spec_peak_flops_per_second") if s.labels["gpu"] == "0"
    }
    assert peaks["bf16"].value == pytest.approx(989.4e12, rel=0.01) and peaks["bf16"].labels["provenance"] == "spec"
    rec = named(text, "gpudash_recommendation_info")
    assert len(rec) == 8 and rec[0].labels["amp_dtype"] == "bfloat16" and int(rec[0].labels["batch_size"]) > 0


def test_no_telemetry_leaves_live_readings_out():
    with gpudash_serve("--replay", str(DGX), "--no-telemetry") as (url, _):
        text = get(url)
    names = {s.name for s in samples(text)}
    assert "gpudash_device_info" in names and "gpudash_precision_spec_native" in names
    # the health verdicts and counters stay (read at their own cadence; no vendor exporter has them)
    health = {"gpudash_device_lost"}
    assert health <= names
    assert not {
        n
        for n in names - health
        if n.startswith("gpudash_device_") and n not in ("gpudash_device_info", "gpudash_device_memory_total_bytes")
    }


def test_name_filter_serves_only_the_asked_series():
    with gpudash_serve("--replay", str(DGX)) as (url, _):
        text = get(url + "?name[]=gpudash_device_utilization_ratio&name[]=gpudash_device_info")
    assert {s.name for s in samples(text)} == {"gpudash_device_utilization_ratio", "gpudash_device_info"}


def test_tls_from_a_certificate_and_key(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    with gpudash_serve("--replay", str(DGX), "--tls-cert", str(cert), "--tls-key", str(key)) as (url, _):
        assert url.startswith("https://127.0.0.1:")
        text = get(url, context=ssl.create_default_context(cafile=str(cert)))
        assert len(named(text, "gpudash_device_info")) == 8
        with pytest.raises(OSError):  # plain HTTP gets no metrics from a TLS port
            get(url.replace("https://", "http://"), timeout=3)


# Remembered results of this machine become metrics -------------------------------------------------------


def _result(precision, verdict, gflops=None, efficiency=None, speedup=None):
    return PrecisionTestResult(
        precision=precision,
        supported=verdict == "verified",
        spec="native",
        verified={"verified": True, "failed": False}.get(verdict),
        verdict=verdict,
        max_rel_error=1e-3 if verdict == "verified" else None,
        failure_reason="a conversion became 0" if verdict == "failed" else None,
        measured_gflops=gflops,
        efficiency=efficiency,
        speedup_vs_fp32=speedup,
    )


def _bench_doc(cpu, measured_at, precisions):
    """A kept run as `gpudash bench --json` writes it (bench.schema.json: the readers leave out any other)."""
    copy = {"op": "copy", "status": "ok", "bytes": 2**28, "gbps": 24.5, "median_s": 0.011, "reps": 5}
    return {
        "version": 1,
        "replayed": False,
        "source": "live",
        "mode": "quick",
        "preset": None,
        "devices": [
            {
                "key": cpu.key,
                "index": cpu.index,
                "vendor": cpu.vendor,
                "name": cpu.name,
                "provenance": "measured",
                "replayed": False,
                "mode": "quick",
                "measured_at": measured_at,
                "duration_s": 3.0,
                "case_budget_s": 2.0,
                "torch": "2.13.0+cpu",
                "precisions": {p: _result(p, None, *v).to_dict() for p, v in precisions.items()},
                "supported_precisions": list(precisions),
                "unsupported_precisions": [],
                "peak_gflops_by_precision": {p: v[0] for p, v in precisions.items()},
                "median_gflops_by_precision": {p: v[0] * 0.9 for p, v in precisions.items()},
                "speedup_vs_fp32": {p: v[2] for p, v in precisions.items()},
                "theoretical_peaks": {},
                "peak_provenance": {},
                "results": [],
                "memory_bandwidth": [
                    {**copy, "spread": {"p10_s": 0.01, "p90_s": 0.012, "min_s": 0.01}, "efficiency": None}
                ],
                "notes": [],
            }
        ],
    }


@pytest.fixture
def remembered_cpu(no_vendor_libs):
    """The live CPU with a probe, two benchmark runs and checks remembered, as the commands store them."""
    machine = discover(include_torch=False)
    cpu = machine.devices[0]
    matrix = PrecisionCapabilityMatrix(
        hardware_name=cpu.name,
        device=cpu.key,
        results={"fp32": _result("fp32", "verified"), "bf16": _result("bf16", "failed")},
        measured_at="2026-11-20T10:00:00+0000",
        provenance="measured",
    )
    remember(machine, {cpu.key: matrix})
    append_run(
        machine,
        _bench_doc(cpu, "2026-11-20T10:05:00+0000", {"fp32": (100.0, 0.3, 1.0), "bf16": (150.0, 0.2, 1.5)}),
    )
    append_run(machine, _bench_doc(cpu, "2026-11-21T09:00:00+0000", {"bf16": (300.0, 0.45, 3.0)}))
    checks = [
        {"plugin": "p", "check": "a", "device": cpu.key, "status": "pass", "summary": ""},
        {"plugin": "p", "check": "b", "device": cpu.key, "status": "fail", "summary": "broken"},
        {"plugin": "p", "check": "c", "device": cpu.key, "status": "fail", "summary": "broken too"},
    ]
    remember_checks(machine, checks)
    return machine, cpu


def by(text, name, **want):
    return [s for s in named(text, name) if all(s.labels.get(k) == v for k, v in want.items())]


def test_remembered_probe_bench_and_checks_become_metrics(remembered_cpu):
    machine, _cpu = remembered_cpu
    registry, _ = registry_for(machine, defaults(), telemetry=False)
    text = scrape(registry)
    verified = {s.labels["precision"]: s.value for s in named(text, "gpudash_precision_verified")}
    assert verified == {"fp32": 1.0, "bf16": 0.0}
    assert by(text, "gpudash_precision_verified", precision="bf16")[0].labels["verdict"] == "failed"
    probed = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc).timestamp()
    assert named(text, "gpudash_probe_timestamp_seconds")[0].value == probed
    flops = {s.labels["precision"]: s.value for s in named(text, "gpudash_bench_matmul_flops_per_second")}
    assert flops == {"bf16": 300e9, "fp32": 100e9}  # bf16 from the newer run, fp32 from the older
    eff = {s.labels["precision"]: s.value for s in named(text, "gpudash_bench_matmul_efficiency_ratio")}
    assert eff == {"bf16": 0.45, "fp32": 0.3}
    when = {s.labels["precision"]: s.value for s in named(text, "gpudash_bench_timestamp_seconds")}
    assert when["bf16"] - when["fp32"] == pytest.approx(22 * 3600 + 55 * 60)
    assert by(text, "gpudash_bench_memory_bandwidth_bytes_per_second", op="copy")[0].value == 24.5e9
    counts = {s.labels["status"]: s.value for s in named(text, "gpudash_check_results")}
    assert counts == {"pass": 1, "warn": 0, "fail": 2, "error": 0, "skip": 0}
    assert len(named(text, "gpudash_check_result_info")) == 3
    assert all(s.labels["device_key"] == "cpu:0" and "gpu" not in s.labels for s in named(text, "gpudash_device_info"))


def test_a_new_result_on_disk_shows_at_the_next_scrape(remembered_cpu):
    machine, cpu = remembered_cpu
    registry, _ = registry_for(machine, defaults(), telemetry=False)
    assert {s.labels["precision"] for s in named(scrape(registry), "gpudash_precision_verified")} == {"fp32", "bf16"}
    remember(
        machine,
        {
            cpu.key: PrecisionCapabilityMatrix(
                cpu.name, device=cpu.key, results={"int8": _result("int8", "verified")}, provenance="measured"
            )
        },
    )
    # A newer partial probe adds to what was remembered (it never hides an older precision's verdict).
    verified = {s.labels["precision"] for s in named(scrape(registry), "gpudash_precision_verified")}
    assert verified == {"fp32", "bf16", "int8"}


def test_textfile_for_node_exporter_is_written_atomically(remembered_cpu, tmp_path, capsys):
    folder = tmp_path / "textfiles"
    folder.mkdir()
    target = folder / "gpudash.prom"
    target.write_text("old content\n")
    os.chmod(target, 0o600)
    assert main(["serve", "--textfile", str(target)]) == 0
    text = target.read_text()
    assert [p.name for p in folder.iterdir()] == ["gpudash.prom"]  # the temporary file was renamed over it
    assert named(text, "gpudash_precision_verified") and not named(text, "gpudash_device_utilization_ratio")
    assert (
        stat.S_IMODE(os.stat(target).st_mode) == 0o600
    )  # gpudash's writer keeps the mode (prometheus_client's gave 0644)
    assert f"replaced {target}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["serve", "--listen", "nowhere"], 2, "--listen nowhere: expected HOST:PORT"),
        (["serve", "--tls-cert", "c.pem"], 2, "--tls-key: TLS needs both"),
        (["serve", "--tls-cert", "/no/c.pem", "--tls-key", "/no/k.pem"], 2, "--tls-cert /no/c.pem: no such file"),
        (["serve", "--textfile", "/tmp/x.txt"], 2, "reads only *.prom files"),
        (["serve", "--textfile", "/no/such/dir/x.prom"], 2, "folder /no/such/dir does not exist"),
    ],
)
def test_bad_options_give_one_line_and_exit_2(argv, code, message, capsys):
    assert main(["--replay", str(DGX), *argv]) == code
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_port_in_use_is_one_line_and_exit_3():
    with gpudash_serve("--replay", str(DGX)) as (url, _):
        port = url.split(":")[2].split("/")[0]
        run = subprocess.run(
            [sys.executable, "-m", "gpudash", "--replay", str(DGX), "serve", "--listen", f"127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=60, cwd=REPO,
        )  # fmt: skip
    assert run.returncode == 3  # could not do its job
    assert run.stderr.strip() == f"gpudash: error: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_sigterm_stops_serving_with_exit_0():
    with gpudash_serve("--replay", str(DGX)) as (_, proc):
        proc.terminate()
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # seen once, beside a second copy of the suite: say what it was doing
            pytest.fail(f"gpudash serve still running 10 s after SIGTERM; its threads: {threads_of(proc.pid)}")
        assert code == 0


def test_amd_gpus_carry_the_labels_of_amds_exporter(monkeypatch):
    """gpu_id, card_model and serial_number as AMD's device-metrics-exporter spells them, so PromQL joins work."""
    from conftest import MI300X
    from fakes import make_fake_amdsmi, make_fake_pynvml, real_pynvml

    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([dict(MI300X, serial="692251001124"), MI300X]))
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    machine = discover(include_torch=False)
    try:
        registry, _ = registry_for(machine, defaults(), telemetry=False, hostname="node-b")
        info = {
            s.labels["gpu_id"]: s.labels for s in named(scrape(registry), "gpudash_device_info") if "gpu_id" in s.labels
        }
    finally:
        machine.close()
    assert set(info) == {"0", "1"}
    assert info["0"]["card_model"] == "AMD Instinct MI300X" and info["0"]["serial_number"] == "692251001124"
    assert info["1"].get("serial_number", "") == ""  # an empty label is no label, to Prometheus
    assert info["0"]["hostname"] == "node-b"


def test_the_endpoint_serves_what_prometheus_client_would_and_re_encodes_only_on_change(remembered_cpu):
    """gpudash serve's HTTP app caches the encoded text of what changes only with a remembered result: the
    output must be what prometheus_client would print, in both formats, filtered by name[], and a new result
    on disk must show at the next scrape."""
    from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest

    from gpudash.exporter.http import MetricsApp

    machine, cpu = remembered_cpu
    registry, collector = registry_for(machine, defaults(), telemetry=False)
    app = MetricsApp(collector)
    text, content_type = app.render(None, None)
    assert content_type.startswith("text/plain") and text.decode() == scrape(registry)
    om, om_type = app.render("application/openmetrics-text;version=1.0.0", None)
    assert om_type.startswith("application/openmetrics-text") and om == openmetrics_latest(registry)
    assert om.count(b"# EOF") == 1 and om.endswith(b"# EOF\n")
    only, _ = app.render(None, frozenset({"gpudash_precision_verified"}))
    assert {s.name for s in samples(only.decode())} == {"gpudash_precision_verified"}
    append_run(machine, _bench_doc(cpu, "2026-11-22T09:00:00+0000", {"fp32": (400.0, 0.9, 1.0)}))
    again, _ = app.render(None, None)
    flops = {s.labels["precision"]: s.value for s in named(again.decode(), "gpudash_bench_matmul_flops_per_second")}
    assert flops["fp32"] == 400e9  # the newest run, not the cached text of the older state
