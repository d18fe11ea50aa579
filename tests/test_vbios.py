"""The GPU's VBIOS version (issue 24 item 4, inventory and drift): read by the real NVML and amdsmi adapters
from the fake bindings (their device dict's "vbios"; absent: NotSupported), carried across the driver child,
recorded and replayed, shown by `info --json`, the dashboard's device detail and `gpudash serve` (which the
fleet reads), and compared by preflight among the ranks with the same GPU model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import H100, MI300X
from fakes import make_fake_amdsmi, make_fake_pynvml, real_pynvml
from jsonschema import Draft202012Validator
from prometheus_client import generate_latest
from servers import REPO, free_port

from gpudash import contracts
from gpudash.devices import discover
from gpudash.devices.amd import AmdSmiBackend
from gpudash.devices.nvidia import NvmlBackend
from gpudash.preflight.verdict import assess

VBIOS = "96.00.30.00.01"  # the fake's answer: the form nvidia-smi prints, no real board's


def strictly(name: str, doc: dict) -> list[str]:
    """What in `doc` breaks contract `name`, unknown keys included (the readers' check leaves those out)."""
    return [
        f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(contracts.schema(name)).iter_errors(doc)
    ]


def nvml_devices(monkeypatch, devices, **kw):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, **kw))
    return NvmlBackend().devices()


@pytest.fixture
def fake_machine(monkeypatch):
    """A live machine over the fake NVML (read in the forked driver child): one H100 with a VBIOS, one without."""
    second = dict(H100, index=1, uuid="GPU-0000-1", pci_bus_id="00000000:18:00.0")
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([dict(H100, vbios=VBIOS), second]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = discover(include_torch=False)
    yield machine
    machine.close()


# The adapters -----------------------------------------------------------------------------------------------


def test_nvml_reads_the_vbios_and_none_without_a_reason_where_there_is_none(monkeypatch):
    with_vbios, without = nvml_devices(monkeypatch, [dict(H100, vbios=VBIOS), dict(H100, index=1, uuid="GPU-2")])
    assert with_vbios.vbios == VBIOS
    # NotSupported (a VM, a part that does not say): None, and no reason that every view would repeat
    assert without.vbios is None and without.unavailable == {}
    (old,) = nvml_devices(monkeypatch, [dict(H100, vbios=VBIOS)], old_binding=True)  # bytes from old bindings
    assert old.vbios == VBIOS
    broken = {(None, "nvmlDeviceGetVbiosVersion"): real_pynvml.NVMLError_Unknown()}
    (failed,) = nvml_devices(monkeypatch, [dict(H100, vbios=VBIOS)], errors=broken)
    assert failed.vbios is None and failed.unavailable == {} and failed.name == H100["name"]
    binding = make_fake_pynvml([dict(H100, vbios=VBIOS)])
    del binding.nvmlDeviceGetVbiosVersion  # a binding without the call
    monkeypatch.setitem(sys.modules, "pynvml", binding)
    (missing,) = NvmlBackend().devices()
    assert missing.vbios is None and missing.unavailable == {}


def test_amdsmi_reads_the_vbios_version_and_none_where_there_is_none(monkeypatch):
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([dict(MI300X, vbios="113-M3000100-102"), MI300X]))
    with_vbios, without = AmdSmiBackend().devices()
    assert with_vbios.vbios == "113-M3000100-102"
    assert without.vbios is None and "vbios" not in without.unavailable
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([dict(MI300X, vbios="N/A")]))
    (na,) = AmdSmiBackend().devices()
    assert na.vbios is None  # amdsmi's spelling of "not given"


def test_the_vbios_crosses_the_driver_child_into_info_json(fake_machine):
    from gpudash.info import info_json

    assert [d.vbios for d in fake_machine.devices if d.vendor == "nvidia"] == [VBIOS, None]
    doc = info_json(fake_machine)
    assert strictly("info", doc) == []
    assert [d["vbios"] for d in doc["devices"]] == [VBIOS, None, None]  # the CPU has none


# Snapshots --------------------------------------------------------------------------------------------------


def test_a_snapshot_records_and_replays_the_vbios_and_older_ones_still_load(fake_machine, tmp_path, h100_snapshot):
    from gpudash.devices.snapshot_file import read_snapshot
    from gpudash.record import record

    data = record(fake_machine, seconds=0, interval=1)
    assert strictly("snapshot", data) == []
    path = tmp_path / "node.json"
    path.write_text(json.dumps(data))
    assert [d.get("vbios") for d in read_snapshot(path)["devices"]][:2] == [VBIOS, None]
    replayed = discover(replay=str(path))
    assert [d.vbios for d in replayed.devices if d.vendor == "nvidia"] == [VBIOS, None]
    older = discover(replay=str(h100_snapshot))  # written before the field
    assert [d.vbios for d in older.devices] == [None]


# The dashboard's device detail ------------------------------------------------------------------------------


def test_the_device_detail_has_a_vbios_row(fake_machine):
    from gpudash.models import Runtime, Sample
    from gpudash.tui.widgets.device_detail import field_rows

    gpu, other = (d for d in fake_machine.devices if d.vendor == "nvidia")
    cpu = next(d for d in fake_machine.devices if d.vendor == "cpu")
    assert ("VBIOS", VBIOS, "") in field_rows(gpu, Sample(), Runtime())
    assert ("VBIOS", "n/a", "not reported by nvml") in field_rows(other, Sample(), Runtime())
    assert not any(label == "VBIOS" for label, _, _ in field_rows(cpu, Sample(), Runtime()))


# gpudash serve, and the fleet reading it ---------------------------------------------------------------------


def test_serve_labels_the_vbios_and_the_fleet_reads_it_into_its_drift_facts(fake_machine):
    from gpudash.config import defaults
    from gpudash.exporter import registry_for
    from gpudash.fleet.exposition import group_by_host, parse, read_host
    from gpudash.fleet.model import Host

    registry, _ = registry_for(fake_machine, defaults(), telemetry=False, hostname="node-a")
    text = generate_latest(registry).decode()
    labels = {
        line.split('device_key="')[1].split('"')[0]: line
        for line in text.splitlines()
        if line.startswith("gpudash_device_info{")
    }
    assert f'vbios_version="{VBIOS}"' in labels["nvidia:0"] and "vbios_version" not in labels["nvidia:1"]
    (samples,) = group_by_host(parse(text), "node-a").values()
    host = Host("node-a", "up")
    read_host(host, samples)
    assert [d.vbios for d in host.devices if d.vendor == "nvidia"] == [VBIOS, None]
    assert host.versions["vbios"] == VBIOS  # what `gpudash fleet`'s drift compares across hosts


# Preflight --------------------------------------------------------------------------------------------------


def ranked(n: int, model: str, vbios: str | None) -> dict:
    return {
        "rank": n, "hostname": "h", "device_error": None, "precisions": {}, "checks": [], "threads": None,
        "device": {"key": f"nvidia:{n}", "name": model, "uuid": f"GPU-{n}", "vbios": vbios},
        "versions": {"torch": "2.5.1", "driver": "550.54", "cuda": "12.4", "hip": None, "gpudash": "0.1.0",
                     "nccl": "2.21.5"},
        "speed": {}, "fingerprints": {}, "collective": None, "health": [],
    }  # fmt: skip


def drift(found, rank):
    return [f for f in found[rank] if f["id"] == "preflight.drift"]


def test_a_vbios_unlike_its_same_model_peers_is_named():
    a100 = "NVIDIA A100-SXM4-80GB"
    found = assess(
        [
            ranked(0, H100["name"], "96.00.30.00.01"),
            ranked(1, H100["name"], "96.00.30.00.01"),
            ranked(2, H100["name"], "96.00.30.00.02"),
            ranked(3, H100["name"], None),  # not reported: unknown, not different
            ranked(4, a100, "92.00.45.00.03"),  # another model: another VBIOS line, not compared with the H100s
        ]
    )
    (odd,) = drift(found, 2)
    assert odd["severity"] == "CRITICAL" and odd["action"] == "drain"
    assert odd["summary"] == (
        f"vbios 96.00.30.00.02 differs from the other {H100['name']} ranks "
        "(96.00.30.00.01 on rank 0-1, 96.00.30.00.02 on rank 2)"
    )
    assert odd["evidence"] == {"what": "vbios", "here": "96.00.30.00.02", "usual": "96.00.30.00.01",
                               "model": H100["name"]}  # fmt: skip
    assert all(drift(found, r) == [] for r in (0, 1, 3, 4))


def preflight_with_fake_gpus(vbios: dict[int, str]) -> dict:
    """Two torchrun ranks (gloo, CPU torch), each given an H100 by the fake NVML (tests/preflight_rank.py's
    FAKE_NVML) with its own UUID and the VBIOS asked for; rank 0's JSON document."""
    gpus = {str(r): dict(H100, uuid=f"GPU-0000-{r}", vbios=v) for r, v in vbios.items()}
    tests = str(REPO / "tests")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [tests, os.environ.get("PYTHONPATH")])),
               FAKE_NVML=json.dumps(gpus))  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-addr", "127.0.0.1",
         "--master-port", str(free_port()), str(REPO / "tests" / "preflight_rank.py"), "preflight", "--no-checks",
         "--no-speed", "--precisions", "fp32", "--json"],
        env=env, capture_output=True, text=True, timeout=240, cwd=REPO,
    )  # fmt: skip
    doc = json.loads(run.stdout)
    assert strictly("preflight", doc) == [], run.stderr
    return doc


def test_preflight_names_the_rank_whose_gpu_has_another_vbios():
    doc = preflight_with_fake_gpus({0: "96.00.30.00.01", 1: "96.00.30.00.02"})
    by_rank = {r["rank"]: r for r in doc["ranks"]}
    assert [by_rank[r]["device"]["vbios"] for r in (0, 1)] == ["96.00.30.00.01", "96.00.30.00.02"]
    (odd,) = [f for f in by_rank[1]["findings"] if f["id"] == "preflight.drift"]
    assert odd["summary"].startswith(f"vbios 96.00.30.00.02 differs from the other {H100['name']} ranks")
    assert not [f for f in by_rank[0]["findings"] if f["id"] == "preflight.drift"]
    assert 1 in doc["failed_ranks"]


def test_preflight_finds_no_drift_when_the_vbios_is_the_same():
    doc = preflight_with_fake_gpus({0: "96.00.30.00.01", 1: "96.00.30.00.01"})
    assert [r["device"]["vbios"] for r in sorted(doc["ranks"], key=lambda r: r["rank"])] == ["96.00.30.00.01"] * 2
    assert not [f for r in doc["ranks"] for f in r["findings"] if f["id"] == "preflight.drift"]
