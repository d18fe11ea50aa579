"""How `gpudash fleet --prometheus` asks a real Prometheus (Debian's, on 127.0.0.1): gpudash serve's readings of
a GPU dcgm-exporter also reads are left out by the query itself (`unless on(UUID)`: a vendor exporter's reading
wins anyway, and at 1,024 hosts they were 41,000 rows a round), while a GPU dcgm-exporter does not read, or reads
as NaN, still shows gpudash's reading."""

from __future__ import annotations

import json
import sys
import time
import urllib.parse

from conftest import H100, make_fake_pynvml
from prometheus_client import generate_latest
from servers import exposition_server, get, prometheus

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for
from gpudash.fleet import gc_pause
from gpudash.fleet.prometheus import PrometheusSource, live_query

A = dict(H100, uuid="GPU-aaaaaaaa-0000-0000-0000-000000000001")
B = dict(H100, uuid="GPU-bbbbbbbb-0000-0000-0000-000000000001")
C = dict(H100, uuid="GPU-cccccccc-0000-0000-0000-000000000001")


def gpudash_page(monkeypatch, gpu: dict, hostname: str) -> str:
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([gpu]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = discover(include_torch=False)
    try:
        return generate_latest(registry_for(machine, defaults(), hostname=hostname)[0]).decode()
    finally:
        machine.close()


def dcgm_lines(gpu: dict, hostname: str, util: str) -> str:
    labels = f'gpu="0",UUID="{gpu["uuid"]}",modelName="{gpu["name"]}",Hostname="{hostname}"'
    fields = {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": "40960", "DCGM_FI_DEV_FB_FREE": "40000",
              "DCGM_FI_DEV_GPU_TEMP": "61", "DCGM_FI_DEV_POWER_USAGE": "650.5"}  # fmt: skip
    return "".join(f"# TYPE {n} gauge\n{n}{{{labels}}} {v}\n" for n, v in fields.items())


def test_gpudash_readings_dcgm_has_are_left_out_by_the_query_and_kept_where_it_has_none(monkeypatch, tmp_path):
    pages = {
        "a": gpudash_page(monkeypatch, A, "node-a") + dcgm_lines(A, "node-a", "97"),
        "b": gpudash_page(monkeypatch, B, "node-b"),  # no dcgm-exporter on node-b
        "c": gpudash_page(monkeypatch, C, "node-c") + dcgm_lines(C, "node-c", "NaN"),  # dcgm reads no utilisation
    }
    with (
        exposition_server(pages["a"]) as (url_a, _),
        exposition_server(pages["b"]) as (url_b, _),
        exposition_server(pages["c"]) as (url_c, _),
        prometheus(tmp_path, [u.removeprefix("http://") for u in (url_a, url_b, url_c)]) as base,
    ):

        def asked(query: str) -> set[str]:
            answer = json.loads(get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": query})))
            gpus = [r["metric"] for r in answer["data"]["result"] if r["metric"].get("vendor") != "cpu"]
            return {m.get("hostname") or m.get("Hostname", "") for m in gpus}

        deadline = time.monotonic() + 30
        while asked("DCGM_FI_DEV_GPU_TEMP") != {"node-a", "node-c"} or asked("gpudash_device_utilization_ratio") != {
            "node-a",
            "node-b",
            "node-c",
        }:
            assert time.monotonic() < deadline, "Prometheus never scraped the three pages"
            time.sleep(0.3)

        assert asked(live_query("gpudash_device_utilization_ratio")) == {"node-b", "node-c"}  # c: dcgm's is NaN
        assert asked(live_query("gpudash_device_power_watts")) == {"node-b"}
        assert asked(live_query("gpudash_device_memory_total_bytes")) == {"node-b"}

        source = PrometheusSource(base, timeout_s=5.0)
        froze: list[int] = []
        monkeypatch.setattr(gc_pause, "refreeze", lambda: froze.append(source._rounds))
        try:
            hosts = {h.name: h for h in source.round().hosts}
            source.round(), source.round()
            source.refreezes = False  # as the Fleet tab sets it: its round's worker freezes once the round is shown
            source.round()
        finally:
            source.close()
    # From the third round the source freezes what a round keeps (gc_pause.refreeze), unless its caller does
    assert froze == [3]
    gpus = {name: next(d for d in host.devices if d.vendor == "nvidia") for name, host in hosts.items()}
    assert gpus["node-a"].utilization_ratio == 0.97  # dcgm-exporter's
    assert gpus["node-a"].power_watts == 650.5
    assert gpus["node-a"].memory_total_bytes == (40960 + 40000) * 2**20
    assert gpus["node-b"].utilization_ratio == 0.35  # gpudash's: nothing else reads node-b
    assert gpus["node-b"].power_watts == 180.5
    assert gpus["node-c"].utilization_ratio == 0.35  # dcgm's NaN: gpudash's fills in
    assert gpus["node-c"].power_watts == 650.5
    assert all("gpudash" in d.sources for d in gpus.values())
