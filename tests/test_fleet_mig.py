"""The fleet keeps MIG instances as rows under their GPU, never merged into it: a dcgm-exporter exposition with
two instances of one GPU (dcgm-exporter's template: the parent's gpu/UUID/modelName plus GPU_I_PROFILE and
GPU_I_ID), scraped for real on 127.0.0.1, and a replayed MIG snapshot served by gpudash."""

from __future__ import annotations

import json

import pytest
from servers import DGX, exposition_server, gpudash_serve

from gpudash.cli import main
from gpudash.contracts.validation import problems

pytestmark = pytest.mark.light
MIB = 2**20
UUID = "GPU-04a34fbc-0a77-5ddc-ae88-ca90a327e677"


def label(gpu: str, extra: str = "") -> str:
    return (f'gpu="{gpu}",UUID="{UUID if gpu == "0" else "GPU-other"}",pci_bus_id="00000000:DF:00.0",'
            f'device="nvidia{gpu}",modelName="NVIDIA H100 80GB HBM3"{extra},Hostname="node-a"')  # fmt: skip


BIG = ',GPU_I_PROFILE="3g.40gb",GPU_I_ID="2"'
SMALL = ',GPU_I_PROFILE="1g.10gb",GPU_I_ID="9"'
MIG_DCGM = "\n".join(
    [
        "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).",
        "# TYPE DCGM_FI_DEV_FB_USED gauge",
        f"DCGM_FI_DEV_FB_USED{{{label('0', BIG)}}} 3584",
        f"DCGM_FI_DEV_FB_USED{{{label('0', SMALL)}}} 7475",
        f"DCGM_FI_DEV_FB_USED{{{label('1')}}} 1024",
        "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).",
        "# TYPE DCGM_FI_DEV_FB_FREE gauge",
        f"DCGM_FI_DEV_FB_FREE{{{label('0', BIG)}}} 36864",
        f"DCGM_FI_DEV_FB_FREE{{{label('0', SMALL)}}} 2509",
        f"DCGM_FI_DEV_FB_FREE{{{label('1')}}} 80000",
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).",
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge",
        f"DCGM_FI_DEV_GPU_TEMP{{{label('0')}}} 41",
        f"DCGM_FI_DEV_GPU_TEMP{{{label('1')}}} 40",
        "",
    ]
)


def fleet_json(capsys, *hosts: str) -> dict:
    code = main(["fleet", "--hosts", ",".join(hosts), "--json", "--timeout", "10"])
    doc = json.loads(capsys.readouterr().out)
    assert problems("fleet", doc) == []
    return doc | {"exit": code}


def test_two_instances_of_one_gpu_are_two_rows_under_it(capsys):
    with exposition_server(MIG_DCGM) as (url, _):
        doc = fleet_json(capsys, url)
    (host,) = doc["hosts"]
    rows = {d["id"]: d for d in host["devices"]}
    assert list(rows) == ["nvidia:0", "nvidia:0/mig2", "nvidia:0/mig9", "nvidia:1"]  # instances right after it
    assert rows["nvidia:0"]["mig"] is None and rows["nvidia:0"]["temperature_celsius"] == 41
    assert rows["nvidia:0"]["memory_used_bytes"] is None  # the instances' memory is theirs, not the GPU's
    assert rows["nvidia:0/mig2"]["memory_used_bytes"] == 3584 * MIB  # not overwritten by the other instance
    assert rows["nvidia:0/mig9"]["memory_used_bytes"] == 7475 * MIB
    assert rows["nvidia:0/mig9"]["memory_total_bytes"] == (7475 + 2509) * MIB
    assert rows["nvidia:0/mig2"]["mig"] == {"gpu_instance_id": "2", "profile": "3g.40gb", "gpu": "nvidia:0"}
    assert rows["nvidia:0/mig2"]["uuid"] == UUID
    assert doc["summary"]["devices"] == 2  # GPUs, not rows
    assert doc["exit"] == 0


def test_text_shows_the_instances_under_their_gpu(capsys):
    with exposition_server(MIG_DCGM) as (url, _):
        assert main(["fleet", "--hosts", url, "--timeout", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [next((w for w in line.split() if w.startswith(("nvidia:", "mig"))), None) for line in lines]
    ids = [i for i in ids if i]
    assert ids == ["nvidia:0", "mig2", "mig9", "nvidia:1"]  # the instances in the rows under their GPU
    assert any("MIG 3g.40gb (GPU_I_ID 2)" in line and "3.5" in line for line in lines)


def test_a_replayed_mig_snapshot_through_gpudash_serve_keeps_its_instances(capsys):
    snapshot = json.loads(DGX.read_text())
    want = {
        f"nvidia:{d['index']}/mig{i['gpu_instance_id']}"
        for d in snapshot["devices"]
        for i in (d.get("samples") or [{}])[0].get("mig_instances") or []
    }
    with gpudash_serve("--replay", str(DGX), "--hostname", "node-a") as (url, _):
        doc = fleet_json(capsys, url)
    (host,) = doc["hosts"]
    got = {d["id"] for d in host["devices"] if d["mig"] is not None}
    assert want and got == want
    assert doc["summary"]["devices"] == 8
