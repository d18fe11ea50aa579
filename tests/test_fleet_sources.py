"""The fleet reads nvitop-exporter's and all-smi's series too (issue 26 item 7): pages in their formats, with
their names, units and labels as their sources write them (XuehaiPan/nvitop nvitop-exporter/nvitop_exporter/
exporter.py: prometheus_client gauges whose unit is appended to the name; lablup/all-smi src/api/metrics/gpu.rs
and process.rs), served on loopback, scraped directly and through a real Prometheus."""

from __future__ import annotations

import time

import pytest
from servers import exposition_server, prometheus

from gpudash.actions import fleet as action
from gpudash.contracts.validation import problems
from gpudash.fleet.prometheus import PrometheusSource
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import targets_from

pytestmark = pytest.mark.light

MIB = 2**20


def nvitop_page(host: str, gpus: int = 2) -> str:
    """What nvitop-exporter serves for `gpus` H100s and one MIG device on GPU 0 (index "0:1")."""
    out = [
        "# HELP nvitop_info NVITOP Prometheus Exporter.",
        "# TYPE nvitop_info gauge",
        f'nvitop_info{{cuda_driver_version="12.4",device_count="{gpus}",driver_version="550.54.15",hostname="{host}"}} 1.0',
    ]
    devices = [(str(i), f"GPU-nv-{host}-{i}") for i in range(gpus)] + [("0:1", f"MIG-nv-{host}-0-1")]
    for family, unit, values in (
        ("gpu_utilization", "Percentage", [37.0, 81.0, 12.0]),
        ("gpu_memory_total", "MiB", [81559.0, 81559.0, 40192.0]),
        ("gpu_memory_used", "MiB", [1024.0, 40960.0, 512.0]),
        ("gpu_temperature", "C", [41.0, 66.0, 41.0]),
        ("gpu_power_usage", "W", [120.5, 512.25, 0.0]),
        ("gpu_fan_speed", "Percentage", [0.0, 0.0, 0.0]),  # a family the fleet does not read
    ):
        out += [f"# HELP {family}_{unit} GPU metric.", f"# TYPE {family}_{unit} gauge"]
        for (index, uuid), value in zip(devices, values):
            name = "NVIDIA H100 80GB HBM3" if ":" not in index else "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
            labels = f'devicename="{name}",hostname="{host}",index="{index}",uuid="{uuid}"'
            out.append(f"{family}_{unit}{{{labels}}} {value}")
    out.append(
        f'process_gpu_memory_MiB{{devicename="NVIDIA H100 80GB HBM3",hostname="{host}",index="1",pid="4242",'
        f'username="alice",uuid="GPU-nv-{host}-1"}} 40000.0'
    )
    return "\n".join(out) + "\n"


def all_smi_page(host: str) -> str:
    """What all-smi's API mode serves: two MI300X boards and one NVIDIA L40S on a host."""
    boards = [("AMD Instinct MI300X", "0", "amd-uuid-0"), ("AMD Instinct MI300X", "1", "amd-uuid-1"),
              ("NVIDIA L40S", "2", "GPU-l40s-2")]  # fmt: skip
    out = []
    for family, values in (
        ("all_smi_gpu_utilization", [55.0, 0.0, 99.0]),
        ("all_smi_gpu_memory_used_bytes", [64 * 2**30, 0, 40 * 2**30]),
        ("all_smi_gpu_memory_total_bytes", [192 * 2**30, 192 * 2**30, 48 * 2**30]),
        ("all_smi_gpu_temperature_celsius", [61.0, 38.0, 70.0]),
        ("all_smi_gpu_power_consumption_watts", [612.0, 140.0, 300.0]),
        ("all_smi_gpu_frequency_mhz", [2100.0, 800.0, 2500.0]),  # not read
    ):
        out += [f"# HELP {family} metric", f"# TYPE {family} gauge"]
        for (model, index, uuid), value in zip(boards, values):
            out.append(f'{family}{{gpu="{model}",instance="{host}",gpu_uuid="{uuid}",gpu_index="{index}"}} {value}')
    out.append(
        'all_smi_process_memory_used_bytes{pid="77",name="python",user="bob",device_id="0",gpu_index="0",'
        'device_uuid="amd-uuid-0",command="python train.py"} 1073741824'
    )
    return "\n".join(out) + "\n"


def hostport(url: str) -> str:
    return url.split("://")[1].split("/")[0]


def scraped(*pages: str):
    import contextlib

    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(exposition_server(page))[0] for page in pages]
        scraper = Scraper(targets_from([hostport(u) for u in urls]), timeout_s=10.0)
        try:
            return scraper.round()
        finally:
            scraper.close()


def test_nvitop_exporter_series_become_devices_with_their_units_and_mig_rows():
    fleet = scraped(nvitop_page("nv1"))
    (host,) = fleet.hosts
    assert (host.name, host.status, host.gpus) == ("nv1", "up", 2)
    gpu0, mig, gpu1 = host.devices
    assert (gpu0.id, gpu0.name, gpu0.uuid, gpu0.sources) == (
        "nvidia:0",
        "NVIDIA H100 80GB HBM3",
        "GPU-nv-nv1-0",
        ["nvitop"],
    )
    assert gpu0.utilization_ratio == pytest.approx(0.37)
    assert gpu0.memory_used_bytes == 1024 * MIB and gpu0.memory_total_bytes == 81559 * MIB
    assert (gpu0.temperature_celsius, gpu0.power_watts) == (41.0, 120.5)
    assert (mig.id, mig.mig_instance, mig.memory_total_bytes) == ("nvidia:0/mig1", "1", 40192 * MIB)
    assert gpu1.utilization_ratio == pytest.approx(0.81) and gpu1.power_watts == 512.25
    assert problems("fleet", action.document(fleet)) == []


def test_all_smi_series_become_devices_named_by_their_vendor_and_host():
    fleet = scraped(all_smi_page("smi1"))
    (host,) = fleet.hosts
    assert (host.name, host.status, host.gpus) == ("smi1", "up", 3)
    ids = {d.id: d for d in host.devices}
    assert sorted(ids) == ["amd:0", "amd:1", "nvidia:2"]
    amd0 = ids["amd:0"]
    assert (amd0.name, amd0.sources, amd0.utilization_ratio) == ("AMD Instinct MI300X", ["all-smi"], 0.55)
    assert amd0.memory_used_bytes == 64 * 2**30 and amd0.memory_total_bytes == 192 * 2**30
    assert (amd0.temperature_celsius, amd0.power_watts) == (61.0, 612.0)
    assert ids["nvidia:2"].uuid == "GPU-l40s-2" and ids["nvidia:2"].utilization_ratio == 0.99
    assert problems("fleet", action.document(fleet)) == []


def test_nvitop_and_gpudash_on_one_host_meet_on_uuid():
    gpudash = (
        'gpudash_device_utilization_ratio{hostname="nv1",device_key="nvidia:0",gpu="0",UUID="GPU-nv-nv1-0"} 0.2\n'
        'gpudash_recommendation_info{hostname="nv1",device_key="nvidia:0",gpu="0",UUID="GPU-nv-nv1-0",'
        'amp_dtype="bfloat16"} 1\n'
    )
    fleet = scraped(nvitop_page("nv1"), gpudash)
    (host,) = fleet.hosts
    gpu0 = host.devices[0]
    assert sorted(gpu0.sources) == ["gpudash", "nvitop"] and gpu0.amp_dtype == "bfloat16"
    assert gpu0.utilization_ratio == pytest.approx(0.37)  # the vendor-side exporter's reading wins
    assert host.gpus == 2


def test_through_prometheus_all_smis_host_is_its_exported_instance(tmp_path):
    """Prometheus moves all-smi's `instance` (the host) to `exported_instance`, and the fleet follows it."""
    with (
        exposition_server(all_smi_page("smi1")) as (smi, _),
        exposition_server(nvitop_page("nv1")) as (nv, _),
        prometheus(tmp_path, [hostport(smi), hostport(nv)]) as base,
    ):
        source = PrometheusSource(base, timeout_s=5.0)
        try:
            deadline = time.monotonic() + 60  # a loaded machine: Prometheus's first scrapes may take a while
            while True:
                hosts = {h.name: h for h in source.round().hosts}
                both = hosts.get("smi1") and hosts["smi1"].gpus == 3 and hosts.get("nv1") and hosts["nv1"].gpus == 2
                if both and all(h.status == "up" for h in hosts.values()):
                    source.history(hosts["nv1"])  # query_range over nvitop's utilisation
                    if hosts["nv1"].devices[0].history:
                        break
                assert time.monotonic() < deadline, {n: (h.status, h.gpus) for n, h in hosts.items()}
                time.sleep(0.3)
        finally:
            source.close()
    assert hosts["smi1"].status == "up" and hosts["nv1"].status == "up" and len(hosts) == 2
    # all-smi's per-process series have no host label: Prometheus gives them only the target's `instance`, and
    # they belong to the host the target's other series name.
    assert [(u.user, u.memory_bytes) for u in hosts["smi1"].usage] == [("bob", 2**30)]
    assert {d.id: d.utilization_ratio for d in hosts["smi1"].devices}["amd:0"] == 0.55
    assert hosts["nv1"].devices[0].history and hosts["nv1"].devices[0].history[-1][1] == pytest.approx(0.37)
