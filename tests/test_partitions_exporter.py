"""`gpudash serve` publishes MIG instances with dcgm-exporter's labels (GPU_I_ID, GPU_I_PROFILE, the parent's gpu
and UUID) and AMD partitions with the labels of AMD's device-metrics-exporter: through the fake NVML's MIG
support, a replayed MIG snapshot, and the fake amdsmi."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import H100, MI300X
from fakes import make_fake_amdsmi, make_fake_pynvml, real_pynvml
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, get, gpudash_serve

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for

pytestmark = pytest.mark.light
GIB = 2**30

MIG_SAMPLE = {
    "memory_used_bytes": 30 * GIB,
    "mig_mode": "enabled",
    "unavailable": {"utilization_pct": "NotSupported"},
    "mig_instances": [
        {"index": 0, "gpu_instance_id": 2, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
         "uuid": "MIG-aaaa", "multiprocessors": 60, "memory_total_bytes": 40448 * 2**20,
         "memory_used_bytes": 20 * GIB, "processes": []},
        {"index": 2, "gpu_instance_id": 9, "compute_instance_id": 0, "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
         "uuid": "MIG-bbbb", "multiprocessors": 16, "memory_total_bytes": 9984 * 2**20,
         "memory_used_bytes": GIB, "processes": []},
    ],
}  # fmt: skip


def samples(text: str) -> list:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def scraped(machine, telemetry: bool = True) -> list:
    from prometheus_client import generate_latest

    registry, _ = registry_for(machine, defaults(), telemetry=telemetry, hostname="node-a")
    return samples(generate_latest(registry).decode())


@pytest.fixture
def mig_machine(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([dict(H100, samples=[MIG_SAMPLE])]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    machine = discover(include_torch=False)
    yield machine
    machine.close()


def test_mig_instances_from_nvml_carry_dcgm_exporters_labels(mig_machine):
    found = scraped(mig_machine)
    used = {s.labels["GPU_I_ID"]: s for s in found if s.name == "gpudash_mig_memory_used_bytes"}
    assert set(used) == {"2", "9"}
    assert used["2"].value == 20 * GIB and used["9"].value == GIB
    assert {k: s.labels["GPU_I_PROFILE"] for k, s in used.items()} == {"2": "3g.40gb", "9": "1g.10gb"}
    gpu = next(s for s in found if s.name == "gpudash_device_info" and s.labels.get("vendor") == "nvidia")
    for s in used.values():  # the parent GPU's identity, as dcgm-exporter writes it for an instance
        assert {k: s.labels[k] for k in ("gpu", "UUID", "modelName", "hostname")} == {
            k: gpu.labels[k] for k in ("gpu", "UUID", "modelName", "hostname")
        }
    total = {s.labels["GPU_I_ID"]: s.value for s in found if s.name == "gpudash_mig_memory_total_bytes"}
    assert total == {"2": 40448 * 2**20, "9": 9984 * 2**20}
    sms = {s.labels["GPU_I_ID"]: s.value for s in found if s.name == "gpudash_mig_multiprocessors"}
    assert sms == {"2": 60, "9": 16}
    info = {s.labels["GPU_I_ID"]: s.labels for s in found if s.name == "gpudash_mig_instance_info"}
    assert (info["2"]["mig_uuid"], info["9"]["mig_uuid"]) == ("MIG-aaaa", "MIG-bbbb")
    # the GPU's own memory series stays one per GPU: summing it never counts an instance twice
    gpu_used = [s for s in found if s.name == "gpudash_device_memory_used_bytes" and s.labels.get("vendor") == "nvidia"]
    assert len(gpu_used) == 1 and "GPU_I_ID" not in gpu_used[0].labels and gpu_used[0].value == 30 * GIB


def test_no_telemetry_leaves_the_instances_to_dcgm_exporter(mig_machine):
    assert not [s for s in scraped(mig_machine, telemetry=False) if s.name.startswith("gpudash_mig_")]


def test_a_replayed_mig_snapshot_is_served_with_its_instances():
    snapshot = json.loads(DGX.read_text())
    expected: dict[tuple[str, str], tuple[str, set]] = {}
    for device in snapshot["devices"]:
        for sample in device.get("samples") or []:  # a replay steps through them: any one may be served
            for instance in sample.get("mig_instances") or []:
                key = (str(device["index"]), str(instance["gpu_instance_id"]))
                profile = instance["name"].rsplit("MIG ", 1)[1]
                expected.setdefault(key, (profile, set()))[1].add(instance["memory_used_bytes"])
    assert expected, "the DGX example snapshot has MIG instances"
    with gpudash_serve("--replay", str(DGX)) as (url, _):
        found = samples(get(url))
    served = {
        (s.labels["gpu"], s.labels["GPU_I_ID"]): (s.labels["GPU_I_PROFILE"], s.value)
        for s in found
        if s.name == "gpudash_mig_memory_used_bytes"
    }
    assert set(served) == set(expected)
    for key, (profile, used) in served.items():
        assert profile == expected[key][0] and used in expected[key][1], key


def test_amd_partitions_carry_the_labels_of_amds_exporter(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    cpx = dict(MI300X, health={"partition": ("CPX", "NPS4")})
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([cpx, MI300X]))
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    machine = discover(include_torch=False)
    try:
        found = scraped(machine, telemetry=False)
    finally:
        machine.close()
    partitions = {s.labels["gpu_id"]: s.labels for s in found if s.name == "gpudash_device_partition_info"}
    assert partitions["0"]["gpu_compute_partition_type"] == "CPX"
    assert partitions["0"]["gpu_memory_partition_type"] == "NPS4"
    assert partitions["1"]["gpu_compute_partition_type"] == "SPX"
    assert partitions["0"]["card_model"] == "AMD Instinct MI300X"
