"""The example snapshots follow the snapshot contract (snapshot.schema.json) and describe the parts they claim to.

They are built from public spec data, not measured, so each must say so in "origin"; their samples must be
physically plausible for the part, and knowledge.arch_for must place each device in the expected family.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudash.knowledge import arch_for, peaks_for
from gpudash.models import VENDORS, DeviceInfo, from_dict

SNAPSHOTS = Path(__file__).resolve().parent.parent / "examples" / "snapshots"
ORIGIN = "built from public spec data; samples are illustrative, not measured"

# file -> expected (name, family) per device
EXPECTED = {
    "h100-80gb.json": [("NVIDIA H100 80GB HBM3", "Hopper")],
    "a100-80gb.json": [("NVIDIA A100-SXM4-80GB", "Ampere")],
    "rtx-3060.json": [("NVIDIA GeForce RTX 3060", "Ampere")],
    "mi300x.json": [("AMD Instinct MI300X", "CDNA3")],
    "rx-5600-xt.json": [("AMD Radeon RX 5600 XT", "RDNA1")],
    "strix-halo-8060s.json": [("AMD Radeon 8060S Graphics", "RDNA3.5")],
    "dgx-h100-8gpu.json": [("NVIDIA H100 80GB HBM3", "Hopper")] * 8,
    "dgx2-v100-16gpu.json": [("Tesla V100-SXM3-32GB", "Volta")] * 16,
}
DEVICE_KEYS = {"vendor", "index", "name", "compute_capability", "gfx_target", "memory_total_bytes", "samples"}
SAMPLE_FIELDS = ("memory_used_bytes", "utilization_pct", "temperature_c", "power_w", "sm_clock_mhz", "memory_clock_mhz")
MONITOR_FIELDS = (
    "fan_speed_pct",
    "encoder_utilization_pct",
    "decoder_utilization_pct",
    "performance_state",
    "persistence_mode",
    "display_active",
    "compute_mode",
    "ecc_errors_uncorrected",
    "mig_mode",
    "mig_mode_pending",
    "power_limit_w",
)
PROCESS_FIELDS = (
    "memory_used_bytes",
    "type",
    "user",
    "command",
    "utilization_pct",
    "cpu_pct",
    "host_memory_bytes",
    "elapsed_s",
)
ALL_FILES = sorted(p.name for p in SNAPSHOTS.glob("*.json"))


def load(name: str) -> dict:
    return json.loads((SNAPSHOTS / name).read_text())


def device_info(dev: dict) -> DeviceInfo:
    return from_dict(DeviceInfo, dev)


def test_every_expected_snapshot_exists():
    missing = set(EXPECTED) - set(ALL_FILES)
    assert not missing


@pytest.mark.parametrize("name", ALL_FILES)
def test_snapshot_has_the_contract_keys(name):
    snap = load(name)
    assert snap["format"] == "gpudash-snapshot"
    assert snap["version"] == 1
    assert snap["origin"] == ORIGIN  # not a measurement, and says so
    assert {"hostname", "machine", "os"} <= set(snap["host"])
    assert {"torch", "cuda", "hip", "driver"} <= set(snap["runtime"])
    assert snap["devices"]
    for dev in snap["devices"]:
        assert set(dev) >= DEVICE_KEYS, DEVICE_KEYS - set(dev)
        assert dev["vendor"] in VENDORS
        if dev["vendor"] == "amd":
            assert dev["compute_capability"] is None and dev["gfx_target"].startswith("gfx")
            assert snap["runtime"]["hip"] and snap["runtime"]["cuda"] is None
        if dev["vendor"] == "nvidia":
            assert dev["gfx_target"] is None and dev["compute_capability"]
            assert snap["runtime"]["cuda"] and snap["runtime"]["hip"] is None
        assert 5 <= len(dev["samples"]) <= 10
        for sample in dev["samples"]:
            for key in SAMPLE_FIELDS + MONITOR_FIELDS:
                # a field is either given or marked n/a with a reason
                assert sample.get(key) is not None or key in sample.get("unavailable", {}), (name, key)
            assert isinstance(sample["processes"], list)
            for proc in sample["processes"]:
                assert isinstance(proc["pid"], int) and proc["pid"] > 0
                for key in PROCESS_FIELDS:
                    assert proc.get(key) is not None or key in proc.get("unavailable", {}), (name, proc["pid"], key)
    assert [d["index"] for d in snap["devices"]] == list(range(len(snap["devices"])))


@pytest.mark.parametrize("name", ALL_FILES)
def test_snapshot_devices_have_a_known_family(name):
    for dev in load(name)["devices"]:
        assert arch_for(device_info(dev)).family not in ("unknown", "CPU")


@pytest.mark.parametrize(("name", "expected"), EXPECTED.items())
def test_snapshot_family_per_device(name, expected):
    devices = load(name)["devices"]
    assert [(d["name"], arch_for(device_info(d)).family) for d in devices] == expected


@pytest.mark.parametrize("name", ALL_FILES)
def test_samples_are_physically_plausible(name):
    for dev in load(name)["devices"]:
        for s in dev["samples"]:
            assert 0 <= s["memory_used_bytes"] <= dev["memory_total_bytes"]
            assert s["utilization_pct"] is None or 0 <= s["utilization_pct"] <= 100
            assert sum(p["memory_used_bytes"] or 0 for p in s["processes"]) <= s["memory_used_bytes"]
            for proc in s["processes"]:
                assert proc["utilization_pct"] is None or 0 <= proc["utilization_pct"] <= (s["utilization_pct"] or 100)
            if s.get("fan_speed_pct") is not None:
                assert 0 <= s["fan_speed_pct"] <= 100
            assert 20 <= s["temperature_c"] <= 95
            if dev.get("max_clock_mhz"):
                assert 0 < s["sm_clock_mhz"] <= dev["max_clock_mhz"]
            if s.get("power_w") is not None and s.get("power_limit_w") is not None:
                assert 0 < s["power_w"] < s["power_limit_w"]


def test_rtx_3060_replays_an_unavailable_field():
    for s in load("rtx-3060.json")["devices"][0]["samples"]:
        assert s["unavailable"]["power_w"] == "NotSupported"
        assert s.get("power_w") is None


def test_rtx_3060_is_a_desktop_with_graphics_processes():
    samples = load("rtx-3060.json")["devices"][0]["samples"]
    types = {p["type"] for s in samples for p in s["processes"]}
    assert types == {"C", "G", "C+G"}
    assert all(s["display_active"] is True and s["fan_speed_pct"] is not None for s in samples)


def test_dgx_h100_is_a_shared_node_with_a_mig_gpu():
    devices = load("dgx-h100-8gpu.json")["devices"]
    procs = [p for d in devices for s in d["samples"] for p in s["processes"]]
    assert {p["name"] for p in procs if p["type"] == "G"} == {"Xorg"}
    assert len({p["user"] for p in procs}) >= 5
    mig = [d for d in devices if d["samples"][0]["mig_mode"] == "enabled"]
    assert [d["index"] for d in mig] == [7]
    for s in mig[0]["samples"]:
        instances = s["mig_instances"]
        assert len(instances) == 4 and s["unavailable"]["utilization_pct"] == "NotSupported"
        assert sum(m["memory_used_bytes"] for m in instances) == s["memory_used_bytes"]
        assert sum(m["memory_total_bytes"] for m in instances) <= devices[7]["memory_total_bytes"]
        for m in instances:
            assert m["name"].startswith("NVIDIA H100 80GB HBM3 MIG ") and m["uuid"].startswith("MIG-")
            assert all(p["gpu_instance_id"] == m["gpu_instance_id"] for p in m["processes"])
        assert sorted(p["pid"] for p in s["processes"]) == sorted(p["pid"] for m in instances for p in m["processes"])


def test_dgx2_snapshot_is_sixteen_distinct_v100s_without_mig():
    devices = load("dgx2-v100-16gpu.json")["devices"]
    assert len({d["uuid"] for d in devices}) == len({d["pci_bus_id"] for d in devices}) == 16
    assert all(s["unavailable"]["mig_mode"] == "NotSupported" for d in devices for s in d["samples"])


@pytest.mark.parametrize("name", ALL_FILES)
def test_replay_reads_processes_and_new_fields(name):
    from gpudash.devices import discover
    from gpudash.models import MigInstance, ProcessUsage

    machine = discover(replay=str(SNAPSHOTS / name))
    raw = load(name)["devices"]
    for dev, raw_dev in zip(machine.devices, raw):
        for raw_sample in raw_dev["samples"]:
            sample = machine.sample(dev)
            assert [p.pid for p in sample.processes] == [p["pid"] for p in raw_sample["processes"]]
            assert all(isinstance(p, ProcessUsage) for p in sample.processes)
            assert all(isinstance(m, MigInstance) for m in sample.mig_instances or [])
            assert (sample.fan_speed_pct, sample.performance_state) == (
                raw_sample["fan_speed_pct"],
                raw_sample.get("performance_state"),
            )


def test_dgx_snapshot_is_eight_distinct_gpus():
    devices = load("dgx-h100-8gpu.json")["devices"]
    assert len({d["uuid"] for d in devices}) == 8
    assert len({d["pci_bus_id"] for d in devices}) == 8


@pytest.mark.parametrize(
    ("name", "precision", "provenance"),
    [
        ("h100-80gb.json", "bf16", "spec"),  # named part: the table wins over 132 SM x 1980 MHz
        ("a100-80gb.json", "tf32", "spec"),
        # the vendor's SM/CU count and clock (docs/peak-sources.md) x the architecture rate, not the snapshot's own
        ("rtx-3060.json", "bf16", "spec-derived"),
        ("mi300x.json", "fp8_e4m3", "spec"),
        ("rx-5600-xt.json", "fp32", "spec"),
        ("strix-halo-8060s.json", "bf16", "spec-derived"),
        ("dgx-h100-8gpu.json", "bf16", "spec"),
        ("dgx2-v100-16gpu.json", "fp32", "estimated"),  # V100-SXM3: no table row, the snapshot's SMs x clock
    ],
)
def test_snapshot_devices_get_peaks(name, precision, provenance):
    peak = peaks_for(device_info(load(name)["devices"][0]))[precision]
    assert peak.provenance == provenance and peak.gflops > 0


def test_mi300x_snapshot_uses_fnuz_fp8():
    assert arch_for(device_info(load("mi300x.json")["devices"][0])).fp8_dtype == "float8_e4m3fnuz"
