"""The real NVML adapter against a fake pynvml module (gpustat's approach, with monkeypatch)."""

import os
import sys

import psutil
import pytest
from conftest import H100
from fakes import FIELD_CALLS, GONE_PID, make_fake_pynvml, real_pynvml

from gpudash.devices.nvidia import NvmlBackend, NvmlUnavailable
from gpudash.models import LOST, PROCESS_NOT_VISIBLE


def open_backend(monkeypatch, devices, **kw):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, **kw))
    backend = NvmlBackend()
    backend.devices()
    return backend


def with_processes(*procs, **sample_fields):
    """H100 whose every sample carries these processes (and extra sample fields)."""
    sample = dict(H100["samples"][0], processes=list(procs), **sample_fields)
    return dict(H100, samples=[sample])


def test_describes_device_from_nvml(monkeypatch):
    (dev,) = open_backend(monkeypatch, [H100]).devices()
    assert dev.name == "NVIDIA H100 80GB HBM3"
    assert dev.compute_capability == "9.0"
    assert dev.memory_total_bytes == 85520809984
    assert dev.driver_version == "550.54.15"
    assert dev.extra["cuda_driver"] == "12.4"
    assert dev.pci_bus_id == "00000000:17:00.0"
    assert dev.unavailable == {}
    assert dev.status == "ok"


def test_sample_converts_units(monkeypatch):
    sample = open_backend(monkeypatch, [H100]).sample(0)
    assert sample.power_w in (180.5, 600.0)  # NVML reports milliwatts
    assert sample.power_limit_w == 700.0
    assert sample.utilization_pct in (35, 90)
    assert sample.memory_total_bytes == 85520809984
    # An H100 SXM has no fan and the fake's H100 no MIG answer: n/a with NVML's word, nothing else.
    assert sample.unavailable == {
        "fan_speed_pct": "NotSupported",
        "mig_mode": "NotSupported",
        "mig_mode_pending": "NotSupported",
        # nor BAR1, PCIe or NVLink figures (tests/test_device_traffic.py gives them)
        "bar1_used_bytes": "NotSupported",
        "bar1_total_bytes": "NotSupported",
        "pcie_tx_bytes_per_s": "NotSupported",
        "pcie_rx_bytes_per_s": "NotSupported",
        "nvlink_tx_bytes_per_s": "no active NVLink",
        "nvlink_rx_bytes_per_s": "no active NVLink",
    }


def test_every_field_gpustat_and_nvitop_show(monkeypatch):
    dev = with_processes(
        fan_speed_pct=45,
        encoder_utilization_pct=12,
        decoder_utilization_pct=3,
        performance_state="P2",
        persistence_mode="disabled",
        display_active=True,
        compute_mode="exclusive_process",
        ecc_errors_uncorrected=2,
        mig_mode="disabled",
        bar1_used_bytes=2 * 1024**2,
        pcie_tx_bytes_per_s=4096,
        pcie_rx_bytes_per_s=8192,
    )
    dev["bar1_total_bytes"] = 128 * 1024**3
    s = open_backend(monkeypatch, [dev]).sample(0)
    assert (s.fan_speed_pct, s.encoder_utilization_pct, s.decoder_utilization_pct) == (45, 12, 3)
    assert (s.performance_state, s.persistence_mode, s.display_active) == ("P2", "disabled", True)
    assert (s.compute_mode, s.ecc_errors_uncorrected) == ("exclusive_process", 2)
    assert (s.mig_mode, s.mig_mode_pending, s.mig_instances) == ("disabled", "disabled", None)
    assert (s.sm_clock_mhz, s.memory_clock_mhz, s.power_limit_w) == (1755, 2619, 700.0)
    assert (s.bar1_used_bytes, s.pcie_tx_bytes_per_s, s.pcie_rx_bytes_per_s) == (2 * 1024**2, 4096, 8192)
    assert s.unavailable == {"nvlink_tx_bytes_per_s": "no active NVLink", "nvlink_rx_bytes_per_s": "no active NVLink"}


@pytest.mark.parametrize("field", sorted(FIELD_CALLS))
def test_not_supported_on_each_field_costs_that_field_only(monkeypatch, field):
    errors = {(0, FIELD_CALLS[field]): real_pynvml.NVMLError_NotSupported()}
    dev = with_processes(fan_speed_pct=30, mig_mode="disabled")
    s = open_backend(monkeypatch, [dev], errors=errors).sample(0)
    assert getattr(s, field) is None
    assert s.unavailable[field] == "NotSupported"
    assert s.memory_used_bytes is not None and s.status == "ok"  # the rest of the GPU still shows
    others = {"fan_speed_pct", "utilization_pct", "temperature_c", "power_w", "performance_state"} - {field}
    assert all(getattr(s, name) is not None for name in others)


def test_clock_not_supported(monkeypatch):
    errors = {(0, "nvmlDeviceGetClockInfo"): real_pynvml.NVMLError_NotSupported()}
    s = open_backend(monkeypatch, [H100], errors=errors).sample(0)
    assert (s.sm_clock_mhz, s.memory_clock_mhz) == (None, None)
    assert s.unavailable["sm_clock_mhz"] == s.unavailable["memory_clock_mhz"] == "NotSupported"


def test_unknown_performance_state_is_na_not_p32(monkeypatch):
    backend = open_backend(monkeypatch, [H100])
    backend.nvml.nvmlDeviceGetPerformanceState = lambda h: real_pynvml.NVML_PSTATE_UNKNOWN
    s = backend.sample(0)
    assert s.performance_state is None and "NVML_PSTATE_UNKNOWN" in s.unavailable["performance_state"]


def test_lost_gpu_at_enumeration_is_lost_not_renamed(monkeypatch):
    second = dict(H100, index=1, uuid="GPU-2", pci_bus_id="00000000:18:00.0")
    errors = {(0, "handle"): real_pynvml.NVMLError_GpuIsLost()}
    backend = open_backend(monkeypatch, [H100, second], errors=errors)
    lost, ok = backend.devices()
    assert lost.status == LOST and lost.unavailable["device"] == "GpuIsLost"
    assert lost.name == "lost (GpuIsLost)" and "NVIDIA GPU" not in lost.name
    assert lost.compute_capability is None and lost.memory_total_bytes is None
    assert ok.compute_capability == "9.0" and ok.status == "ok"
    sample = backend.sample(0)
    assert sample.status == LOST and sample.unavailable["device"] == "GpuIsLost"
    assert "fallen off the bus" in sample.unavailable["all"]
    assert backend.sample(1).utilization_pct is not None


def test_gpu_lost_while_running(monkeypatch):
    backend = open_backend(monkeypatch, [H100])
    assert backend.sample(0).status == "ok"
    backend.nvml.nvmlDeviceGetMemoryInfo = _raises(real_pynvml.NVMLError_GpuIsLost())
    sample = backend.sample(0)
    assert sample.status == LOST and sample.unavailable["device"] == "GpuIsLost"
    assert sample.utilization_pct is None and sample.processes is None


def test_memory_falls_back_to_v1_on_old_drivers(monkeypatch):
    (dev,) = open_backend(monkeypatch, [H100], memory_v2=False).devices()
    assert dev.memory_total_bytes == 85520809984
    assert "memory" not in dev.unavailable


def test_missing_library_is_reported_not_raised(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    with pytest.raises(NvmlUnavailable, match=r"no NVIDIA driver library \(LibraryNotFound\)"):
        NvmlBackend()


def test_old_binding_bytes_are_decoded(monkeypatch):
    """nvidia-ml-py before 11.450 returned bytes for names, UUIDs, PCI ids and the driver version."""
    backend = open_backend(monkeypatch, [with_processes({"pid": GONE_PID, "memory_used_bytes": 1})], old_binding=True)
    (dev,) = backend.devices()
    assert (dev.name, dev.uuid, dev.pci_bus_id, dev.driver_version) == (
        "NVIDIA H100 80GB HBM3",
        H100["uuid"],
        "00000000:17:00.0",
        "550.54.15",
    )
    assert backend.driver_version == "550.54.15"
    (proc,) = backend.sample(0).processes  # the old binding's own unversioned call
    assert (proc.pid, proc.type, proc.memory_used_bytes) == (GONE_PID, "C", 1)


def test_failing_driver_version_is_na_with_reason(monkeypatch):
    errors = {(None, "nvmlSystemGetDriverVersion"): real_pynvml.NVMLError_Unknown()}
    backend = open_backend(monkeypatch, [H100], errors=errors)
    (dev,) = backend.devices()
    assert backend.driver_version is None and backend.unavailable["driver"] == "Unknown"
    assert dev.driver_version is None and dev.unavailable["driver_version"] == "Unknown"


# --- processes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["v3", "v2", "v1"])
def test_processes_fall_back_through_the_api_versions(monkeypatch, api):
    """Drivers before R510 have no _v3 symbol; older ones no _v2 either: the list must not go empty."""
    dev = with_processes({"pid": GONE_PID, "memory_used_bytes": 2**30, "type": "C"})
    backend = open_backend(monkeypatch, [dev], process_api=api)
    (proc,) = backend.sample(0).processes
    assert (proc.pid, proc.memory_used_bytes, proc.type) == (GONE_PID, 2**30, "C")
    assert backend.processes.api_version("0") == api


def test_the_bindings_own_call_fails_on_a_pre_r510_driver(monkeypatch):
    """What gpudash used to call: nvidia-ml-py's unversioned function asks for _v3 and raises."""
    dev = with_processes({"pid": GONE_PID, "memory_used_bytes": 1})
    nv = make_fake_pynvml([dev], process_api="v2")
    handle = nv.nvmlDeviceGetHandleByIndex(0)
    with pytest.raises(real_pynvml.NVMLLibraryMismatchError):
        nv.nvmlDeviceGetComputeRunningProcesses(handle)
    assert [p.pid for p in nv.nvmlDeviceGetComputeRunningProcesses_v2(handle)] == [GONE_PID]


def test_v3_not_supported_falls_back_to_v2(monkeypatch):
    dev = with_processes({"pid": GONE_PID, "memory_used_bytes": 5})
    errors = {(0, "nvmlDeviceGetComputeRunningProcesses_v3"): real_pynvml.NVMLError_NotSupported()}
    backend = open_backend(monkeypatch, [dev], errors=errors)
    assert [p.pid for p in backend.sample(0).processes] == [GONE_PID]
    assert backend.processes.api_version("0") == "v2"


def test_no_api_version_answers_says_what_each_said(monkeypatch):
    dev = with_processes({"pid": GONE_PID})
    errors = {
        (0, f"nvmlDeviceGet{kind}RunningProcesses{suffix}"): real_pynvml.NVMLError_NotSupported()
        for kind in ("Compute", "Graphics")
        for suffix in ("_v3", "_v2", "")
    }
    s = open_backend(monkeypatch, [dev], errors=errors).sample(0)
    assert s.processes is None
    assert s.unavailable["processes"] == (
        "compute: v3 NotSupported, v2 NotSupported, v1 NotSupported; "
        "graphics: v3 NotSupported, v2 NotSupported, v1 NotSupported"
    )


def test_no_permission_is_the_answer_not_a_reason_to_try_older(monkeypatch):
    dev = with_processes({"pid": GONE_PID, "type": "G"})
    errors = {(0, "nvmlDeviceGetComputeRunningProcesses_v3"): real_pynvml.NVMLError_NoPermission()}
    s = open_backend(monkeypatch, [dev], errors=errors).sample(0)
    assert [p.pid for p in s.processes] == [GONE_PID]  # the graphics list still answered
    assert s.unavailable["compute_processes"] == "NoPermission"


def test_graphics_processes_and_both_kinds(monkeypatch):
    dev = with_processes(
        {"pid": GONE_PID, "memory_used_bytes": 2**30, "type": "C"},
        {"pid": GONE_PID + 1, "memory_used_bytes": 4 * 2**20, "type": "G"},
        {"pid": GONE_PID + 2, "memory_used_bytes": 2**28, "type": "C+G"},
    )
    procs = open_backend(monkeypatch, [dev]).sample(0).processes
    assert {p.pid: p.type for p in procs} == {GONE_PID: "C", GONE_PID + 1: "G", GONE_PID + 2: "C+G"}
    assert {p.pid: p.memory_used_bytes for p in procs}[GONE_PID + 2] == 2**28


def test_sm_share_per_process(monkeypatch):
    dev = with_processes(
        {"pid": GONE_PID, "memory_used_bytes": 1, "utilization_pct": 87, "memory_utilization_pct": 40},
        {"pid": GONE_PID + 1, "memory_used_bytes": 1, "type": "G"},
    )
    busy, idle = open_backend(monkeypatch, [dev]).sample(0).processes
    assert (busy.utilization_pct, busy.memory_utilization_pct, busy.encoder_utilization_pct) == (87, 40, 0)
    assert idle.utilization_pct is None
    assert idle.unavailable["utilization_pct"] == "no driver sample since the last reading"


def test_sm_share_not_supported(monkeypatch):
    dev = with_processes({"pid": GONE_PID, "memory_used_bytes": 1, "unavailable": {"utilization_pct": "NotSupported"}})
    (proc,) = open_backend(monkeypatch, [dev]).sample(0).processes
    assert proc.utilization_pct is None and proc.unavailable["utilization_pct"] == "NotSupported"


def test_processes_with_unknown_memory(monkeypatch):
    (proc,) = open_backend(monkeypatch, [with_processes({"pid": 7, "memory_used_bytes": None})]).sample(0).processes
    assert proc.pid == 7 and proc.memory_used_bytes is None
    assert "NVML_VALUE_NOT_AVAILABLE" in proc.unavailable["memory_used_bytes"]


def test_host_fields_for_a_visible_process_and_na_for_a_hidden_one(monkeypatch):
    dev = with_processes(
        {"pid": os.getpid(), "memory_used_bytes": 2**30},
        {"pid": GONE_PID, "memory_used_bytes": 1},
    )
    mine, gone = open_backend(monkeypatch, [dev]).sample(0).processes
    me = psutil.Process()
    assert mine.name == me.name() and mine.user == me.username()
    assert mine.command == " ".join(me.cmdline())
    assert mine.host_memory_bytes > 0 and mine.elapsed_s >= 0
    assert mine.cpu_pct is None and mine.unavailable["cpu_pct"] == "needs a second reading"
    # not visible here (exited, or a host pid seen from a container): NVML's fields stay, host ones say why
    assert (gone.pid, gone.memory_used_bytes, gone.type) == (GONE_PID, 1, "C")
    assert gone.name is None and gone.user is None and gone.command is None
    assert all(gone.unavailable[f] == PROCESS_NOT_VISIBLE for f in ("user", "command", "cpu_pct", "host_memory_bytes"))


# --- MIG ---------------------------------------------------------------------------------------

MIG_SAMPLE = {
    "memory_used_bytes": 30 * 2**30,
    "mig_mode": "enabled",
    "unavailable": {"utilization_pct": "NotSupported"},  # what NVML answers for a MIG-enabled GPU
    "processes": [
        {"pid": GONE_PID, "memory_used_bytes": 20 * 2**30, "gpu_instance_id": 2, "compute_instance_id": 0},
        {"pid": GONE_PID + 1, "memory_used_bytes": 2**30, "gpu_instance_id": 9, "compute_instance_id": 0},
    ],
    "mig_instances": [
        {
            "index": 0,
            "gpu_instance_id": 2,
            "compute_instance_id": 0,
            "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
            "uuid": "MIG-aaaa",
            "multiprocessors": 60,
            "memory_total_bytes": 40448 * 2**20,
            "memory_used_bytes": 20 * 2**30,
            "processes": [{"pid": GONE_PID, "memory_used_bytes": 20 * 2**30, "gpu_instance_id": 2}],
        },
        {
            "index": 2,
            "gpu_instance_id": 9,
            "compute_instance_id": 0,
            "name": "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
            "uuid": "MIG-bbbb",
            "multiprocessors": 16,
            "memory_total_bytes": 9984 * 2**20,
            "memory_used_bytes": 2**30,
            "processes": [],
        },
    ],
}


def test_mig_instances_are_rows_with_memory_and_processes(monkeypatch):
    s = open_backend(monkeypatch, [dict(H100, samples=[MIG_SAMPLE])]).sample(0)
    assert (s.mig_mode, s.mig_mode_pending) == ("enabled", "enabled")
    assert s.utilization_pct is None and s.unavailable["utilization_pct"] == "NotSupported"
    big, small = s.mig_instances
    assert (big.index, big.gpu_instance_id, big.compute_instance_id) == (0, 2, 0)
    assert (big.name, big.uuid, big.multiprocessors) == ("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "MIG-aaaa", 60)
    assert (big.memory_used_bytes, big.memory_total_bytes) == (20 * 2**30, 40448 * 2**20)
    assert [p.pid for p in big.processes] == [GONE_PID] and big.processes[0].gpu_instance_id == 2
    assert (small.index, small.processes) == (2, [])  # slot 1 is empty: NotFound, skipped
    assert {p.pid: p.gpu_instance_id for p in s.processes} == {GONE_PID: 2, GONE_PID + 1: 9}


def test_mig_without_the_aggregate_process_list_uses_the_instances(monkeypatch):
    errors = {
        (0, f"nvmlDeviceGet{kind}RunningProcesses_v3"): real_pynvml.NVMLError_NoPermission()
        for kind in ("Compute", "Graphics")
    }
    s = open_backend(monkeypatch, [dict(H100, samples=[MIG_SAMPLE])], errors=errors).sample(0)
    assert [p.pid for p in s.processes] == [GONE_PID]
    assert "processes" not in s.unavailable


def test_mig_mode_change_pending(monkeypatch):
    sample = dict(H100["samples"][0], mig_mode="disabled", mig_mode_pending="enabled")
    s = open_backend(monkeypatch, [dict(H100, samples=[sample])]).sample(0)
    assert (s.mig_mode, s.mig_mode_pending, s.mig_instances) == ("disabled", "enabled", None)


def _raises(exc):
    def call(*args, **kwargs):
        raise exc

    return call
