"""What a user sees in `gpudash info --json` (and the text table) on faked drivers: processes on old
drivers, graphics processes, MIG, lost GPUs, old bindings' bytes, and NotSupported on each field."""

import json
import sys

import pytest
from conftest import H100, MI300X
from fakes import FIELD_CALLS, GONE_PID, load_example, make_fake_amdsmi, make_fake_pynvml, real_pynvml

from gpudash.cli import main
from gpudash.precisions import PRECISIONS


def info(monkeypatch, capsys, devices, *args, amd=None, **fake):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, **fake))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi(amd) if amd else None)
    code = main(["info", "--no-torch", *args])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out) if "--json" in args else out


def gpus(data):
    return [d for d in data["devices"] if d["vendor"] != "cpu"]


def h100(*procs, **fields):
    return dict(H100, samples=[dict(H100["samples"][0], processes=list(procs), **fields)])


def test_processes_on_a_pre_r510_driver(monkeypatch, capsys):
    dev = h100({"pid": GONE_PID, "memory_used_bytes": 3 * 2**30, "utilization_pct": 71})
    (gpu,) = gpus(info(monkeypatch, capsys, [dev], "--json", process_api="v2", driver="470.256.02"))
    (proc,) = gpu["sample"]["processes"]
    assert (proc["pid"], proc["type"], proc["memory_used_bytes"], proc["utilization_pct"]) == (
        GONE_PID,
        "C",
        3 * 2**30,
        71,
    )
    for key in ("user", "command", "cpu_pct", "host_memory_bytes", "elapsed_s"):
        assert proc[key] is None and proc["unavailable"][key]  # psutil cannot see it: n/a with the reason
    text = info(monkeypatch, capsys, [dev], process_api="v1")
    row = next(line.split() for line in text.splitlines() if line.startswith("nvidia:0 "))
    assert row[:6] == ["nvidia:0", str(GONE_PID), "C", "n/a", "3.0", "GiB"]
    assert "n/a: process user, cpu, host mem, time, command of 1 process: no such process here" in text


def test_graphics_process_is_listed(monkeypatch, capsys):
    dev = h100(
        {"pid": GONE_PID, "memory_used_bytes": 40 * 2**30, "type": "C"},
        {"pid": GONE_PID + 1, "memory_used_bytes": 4 * 2**20, "type": "G"},
    )
    (gpu,) = gpus(info(monkeypatch, capsys, [dev], "--json"))
    assert {p["pid"]: p["type"] for p in gpu["sample"]["processes"]} == {GONE_PID: "C", GONE_PID + 1: "G"}


def test_mig_instances_in_info_json(monkeypatch, capsys):
    from test_nvidia_adapter import MIG_SAMPLE

    (gpu,) = gpus(info(monkeypatch, capsys, [dict(H100, samples=[MIG_SAMPLE])], "--json"))
    sample = gpu["sample"]
    assert (sample["mig_mode"], sample["mig_mode_pending"]) == ("enabled", "enabled")
    assert sample["utilization_pct"] is None and sample["unavailable"]["utilization_pct"] == "NotSupported"
    rows = [(m["index"], m["name"], m["memory_total_bytes"], len(m["processes"])) for m in sample["mig_instances"]]
    assert rows == [
        (0, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 40448 * 2**20, 1),
        (2, "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 9984 * 2**20, 0),
    ]


def test_lost_gpu_says_lost_and_why(monkeypatch, capsys):
    second = dict(H100, index=1, uuid="GPU-2", pci_bus_id="00000000:18:00.0")
    errors = {(1, "handle"): real_pynvml.NVMLError_GpuIsLost()}
    ok, lost = gpus(info(monkeypatch, capsys, [H100, second], "--json", errors=errors))
    assert (ok["status"], ok["status_reason"], ok["arch"]) == ("ok", None, "Hopper")
    assert lost["status"] == "lost"
    assert lost["status_reason"].startswith("GpuIsLost: the GPU has fallen off the bus")
    assert lost["name"] == "lost (GpuIsLost)" and lost["arch"] == "unknown" and lost["fp8_dtype"] is None
    assert set(lost["precisions"]) == set(PRECISIONS)  # every key kept, nothing claimed
    assert all(p == {"native": False, "support": "unknown"} for p in lost["precisions"].values())
    assert lost["sample"]["status"] == "lost"
    text = info(monkeypatch, capsys, [H100, second], errors=errors)
    row = next(line for line in text.splitlines() if line.startswith("[nvidia:1]"))
    assert "lost (GpuIsLost)" in row and "fp32" not in row and "NVIDIA GPU" not in text
    assert "note: nvidia:1 is lost: GpuIsLost: the GPU has fallen off the bus" in text


def test_gpu_lost_after_its_name_was_read(monkeypatch, capsys):
    errors = {(0, "nvmlDeviceGetMemoryInfo"): real_pynvml.NVMLError_GpuIsLost()}
    (gpu,) = gpus(info(monkeypatch, capsys, [H100], "--json", errors=errors))
    assert gpu["status"] == "lost" and "GpuIsLost" in gpu["status_reason"]


def test_old_binding_bytes_never_break_info_json(monkeypatch, capsys):
    dev = h100({"pid": GONE_PID, "memory_used_bytes": 1, "type": "G"})
    data = info(monkeypatch, capsys, [dev], "--json", old_binding=True)
    (gpu,) = gpus(data)
    assert (gpu["name"], gpu["uuid"], gpu["pci_bus_id"]) == ("NVIDIA H100 80GB HBM3", H100["uuid"], "00000000:17:00.0")
    assert data["runtime"]["driver"] == gpu["driver_version"] == "550.54.15"
    assert [p["pid"] for p in gpu["sample"]["processes"]] == [GONE_PID]
    assert "NVIDIA H100 80GB HBM3" in info(monkeypatch, capsys, [dev], old_binding=True)


def test_cuda_driver_version_and_a_failing_driver_query(monkeypatch, capsys):
    data = info(monkeypatch, capsys, [H100], "--json", cuda=12040)
    assert data["runtime"]["cuda_driver"] == "12.4" and data["runtime_unavailable"] == {}
    errors = {(None, "nvmlSystemGetDriverVersion"): real_pynvml.NVMLError_Unknown()}
    data = info(monkeypatch, capsys, [H100], "--json", errors=errors)
    assert data["runtime"]["driver"] is None and data["runtime_unavailable"]["driver"] == "Unknown"
    assert gpus(data)[0]["unavailable"]["driver_version"] == "Unknown"
    text = info(monkeypatch, capsys, [H100], errors=errors)
    assert "note: NVIDIA driver version n/a: Unknown" in text and "{" not in text.splitlines()[0]


@pytest.mark.parametrize("field", sorted(FIELD_CALLS))
def test_not_supported_on_each_field(monkeypatch, capsys, field):
    dev = h100(fan_speed_pct=30, mig_mode="disabled")
    errors = {(0, FIELD_CALLS[field]): real_pynvml.NVMLError_NotSupported()}
    (gpu,) = gpus(info(monkeypatch, capsys, [dev], "--json", errors=errors))
    assert gpu["sample"][field] is None and gpu["sample"]["unavailable"][field] == "NotSupported"
    assert gpu["status"] == "ok" and gpu["sample"]["memory_used_bytes"] is not None


def test_new_fields_are_in_info_json(monkeypatch, capsys):
    dev = h100(fan_speed_pct=55, encoder_utilization_pct=9, performance_state="P0", mig_mode="disabled")
    (gpu,) = gpus(info(monkeypatch, capsys, [dev], "--json"))
    s = gpu["sample"]
    assert (s["fan_speed_pct"], s["encoder_utilization_pct"], s["decoder_utilization_pct"]) == (55, 9, 0)
    assert (s["performance_state"], s["power_limit_w"], s["persistence_mode"]) == ("P0", 700.0, "enabled")
    assert (s["compute_mode"], s["display_active"], s["ecc_errors_uncorrected"]) == ("default", False, 0)
    assert (s["mig_mode"], s["mig_instances"], s["status"]) == ("disabled", None, "ok")
    assert gpu["uuid"] == H100["uuid"]


def test_amd_processes_in_info_json(monkeypatch, capsys):
    amd = dict(MI300X, samples=[dict(MI300X["samples"][0], processes=[{"pid": GONE_PID, "memory_used_bytes": 2**30}])])
    data = info(monkeypatch, capsys, [], "--json", amd=[amd], init_error=real_pynvml.NVMLError_LibraryNotFound())
    (gpu,) = gpus(data)
    (proc,) = gpu["sample"]["processes"]
    assert (proc["pid"], proc["memory_used_bytes"], proc["type"]) == (GONE_PID, 2**30, None)
    assert gpu["sample"]["unavailable"]["mig_mode"].startswith("NVIDIA only")


def test_faked_dgx2_on_its_pre_r510_driver(monkeypatch, capsys):
    """16 V100s on driver 465 (no _v3 process symbol): every busy GPU still lists its processes."""
    devices = load_example("dgx2-v100-16gpu.json")["devices"]
    data = info(monkeypatch, capsys, devices, "--json", process_api="v2", driver="465.19.01", cuda=11030)
    found = gpus(data)
    assert len(found) == 16 and data["runtime"]["cuda_driver"] == "11.3"
    busy = [g["index"] for g in found if g["sample"]["processes"]]
    assert busy == [i for i in range(16) if i != 14]
    assert all(g["sample"]["unavailable"]["mig_mode"] == "NotSupported" for g in found)


def test_faked_dgx_h100_shows_xorg_and_the_mig_gpu(monkeypatch, capsys):
    found = gpus(info(monkeypatch, capsys, load_example("dgx-h100-8gpu.json")["devices"], "--json"))
    assert "G" in {p["type"] for p in found[0]["sample"]["processes"]}
    mig = found[7]["sample"]
    assert mig["mig_mode"] == "enabled" and mig["unavailable"]["utilization_pct"] == "NotSupported"
    assert [m["name"].rsplit(" ", 1)[1] for m in mig["mig_instances"]] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert all(p["unavailable"]["utilization_pct"] == "NotSupported" for p in mig["processes"])
