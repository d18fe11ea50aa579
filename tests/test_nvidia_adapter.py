"""The real NVML adapter against a fake pynvml module (gpustat's approach, with monkeypatch)."""

import sys

import pytest
from conftest import H100
from fakes import make_fake_pynvml, real_pynvml

from gpudash.devices.nvidia import NvmlBackend, NvmlUnavailable


def open_backend(monkeypatch, devices, **kw):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, **kw))
    return NvmlBackend()


def test_describes_device_from_nvml(monkeypatch):
    backend = open_backend(monkeypatch, [H100])
    (dev,) = backend.devices()
    assert dev.name == "NVIDIA H100 80GB HBM3"
    assert dev.compute_capability == "9.0"
    assert dev.memory_total_bytes == 85520809984
    assert dev.driver_version == "550.54.15"
    assert dev.extra["cuda_driver"] == "12.4"
    assert dev.pci_bus_id == "00000000:17:00.0"
    assert dev.unavailable == {}


def test_sample_converts_units(monkeypatch):
    backend = open_backend(monkeypatch, [H100])
    backend.devices()
    sample = backend.sample(0)
    assert sample.power_w in (180.5, 600.0)  # NVML reports milliwatts
    assert sample.utilization_pct in (35, 90)
    assert sample.memory_total_bytes == 85520809984
    assert sample.unavailable == {}


def test_not_supported_field_becomes_na_with_reason(monkeypatch):
    errors = {(0, "nvmlDeviceGetPowerUsage"): real_pynvml.NVMLError_NotSupported()}
    backend = open_backend(monkeypatch, [H100], errors=errors)
    backend.devices()
    sample = backend.sample(0)
    assert sample.power_w is None
    assert sample.unavailable["power_w"] == "NotSupported"
    assert sample.temperature_c is not None  # the rest of the device still shows


def test_lost_gpu_keeps_the_others(monkeypatch):
    second = dict(H100, index=1, uuid="GPU-2", pci_bus_id="00000000:18:00.0")
    errors = {(0, "handle"): real_pynvml.NVMLError_GpuIsLost()}
    backend = open_backend(monkeypatch, [H100, second], errors=errors)
    devs = backend.devices()
    assert devs[0].unavailable["device"] == "GpuIsLost"
    assert devs[1].compute_capability == "9.0"
    assert backend.sample(0).unavailable["device"]
    assert backend.sample(1).utilization_pct is not None


def test_memory_falls_back_to_v1_on_old_drivers(monkeypatch):
    backend = open_backend(monkeypatch, [H100], memory_v2=False)
    (dev,) = backend.devices()
    assert dev.memory_total_bytes == 85520809984
    assert "memory" not in dev.unavailable


def test_missing_library_is_reported_not_raised(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([], init_error=real_pynvml.NVMLError_LibraryNotFound()))
    with pytest.raises(NvmlUnavailable, match=r"no NVIDIA driver library \(LibraryNotFound\)"):
        NvmlBackend()


def test_processes_with_unknown_memory(monkeypatch):
    dev = dict(H100, samples=[dict(H100["samples"][0], processes=[{"pid": 7, "memory_used_bytes": None}])])
    backend = open_backend(monkeypatch, [dev])
    backend.devices()
    procs = backend.sample(0).processes
    assert procs[0].pid == 7 and procs[0].memory_used_bytes is None


def test_processes_are_named_on_a_live_machine(monkeypatch):
    import os

    import psutil

    dev = dict(
        H100,
        samples=[
            dict(
                H100["samples"][0],
                processes=[
                    {"pid": os.getpid(), "memory_used_bytes": 2**30},
                    {"pid": 2**22 + 12345, "memory_used_bytes": 1},
                ],
            )
        ],
    )
    backend = open_backend(monkeypatch, [dev])
    backend.devices()
    mine, gone = backend.sample(0).processes
    assert mine.name == psutil.Process().name() and mine.memory_used_bytes == 2**30
    assert gone.name is None  # not visible here (exited, or a host pid seen from a container)
