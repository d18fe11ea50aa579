"""The real amdsmi adapter against a fake amdsmi module."""

import io
import os
import sys
from contextlib import redirect_stdout

import psutil
import pytest
from conftest import MI300X
from fakes import GONE_PID, AmdSmiLibraryException, make_fake_amdsmi

from gpudash.devices.amd import AmdSmiBackend, AmdSmiUnavailable
from gpudash.devices.amd_processes import AmdProcesses
from gpudash.models import PROCESS_NOT_VISIBLE


def open_backend(monkeypatch, devices, **kw):
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi(devices, **kw))
    return AmdSmiBackend()


def test_describes_mi300x(monkeypatch):
    (dev,) = open_backend(monkeypatch, [MI300X]).devices()
    assert dev.name == "AMD Instinct MI300X"
    assert dev.gfx_target == "gfx942"
    assert dev.compute_capability is None
    assert dev.memory_total_bytes == 206141652992 // (1024 * 1024) * 1024 * 1024  # MB granularity
    assert dev.multiprocessors == 304
    assert dev.torch_index == 0


def test_sample_reads_activity_power_and_clocks(monkeypatch):
    backend = open_backend(monkeypatch, [MI300X])
    backend.devices()
    s = backend.sample(0)
    assert (s.utilization_pct, s.power_w, s.sm_clock_mhz, s.temperature_c) == (12, 220, 2100, 45)
    assert s.memory_used_bytes == 4 * 1024**3


def test_na_strings_become_reasons(monkeypatch):
    apu = dict(MI300X, samples=[{"memory_used_bytes": 0}])  # APUs report activity and power as N/A
    backend = open_backend(monkeypatch, [apu])
    backend.devices()
    s = backend.sample(0)
    assert s.utilization_pct is None and s.unavailable["utilization_pct"] == "N/A"
    assert s.power_w is None and "power_w" in s.unavailable


def test_library_error_on_one_field(monkeypatch):
    errors = {(0, "amdsmi_get_temp_metric"): AmdSmiLibraryException(2)}
    backend = open_backend(monkeypatch, [MI300X], errors=errors)
    backend.devices()
    s = backend.sample(0)
    assert s.temperature_c is None
    assert "NOT_SUPPORTED" in s.unavailable["temperature_c"]
    assert s.utilization_pct == 12


def test_import_failure_keeps_stdout_clean(monkeypatch, tmp_path):
    # The real amdsmi without ROCm prints to stdout and raises KeyError on import.
    (tmp_path / "amdsmi.py").write_text(
        "print('/opt/rocm/lib/libamd_smi.so: cannot open shared object file')\nraise KeyError('libamd_smi.so')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(AmdSmiUnavailable, match=r"ROCm library libamd_smi\.so not found"):
        AmdSmiBackend()
    assert out.getvalue() == ""


def test_init_failure(monkeypatch):
    monkeypatch.setitem(
        sys.modules,
        "amdsmi",
        make_fake_amdsmi([], init_error=AmdSmiLibraryException(8, "AMDSMI_STATUS_DRIVER_NOT_LOADED")),
    )
    with pytest.raises(AmdSmiUnavailable, match="DRIVER_NOT_LOADED"):
        AmdSmiBackend()


class Clock:
    def __init__(self):
        self.now = 50.0

    def __call__(self):
        return self.now


def mi300x_with(*procs, **fields):
    return dict(MI300X, samples=[dict(MI300X["samples"][0], processes=list(procs), **fields)])


@pytest.mark.parametrize("process_api", ["dicts", "handles"])
def test_processes_in_both_amdsmi_shapes(monkeypatch, process_api):
    """amdsmi 7 lists dicts; older amdsmi listed handles for amdsmi_get_gpu_process_info."""
    dev = mi300x_with({"pid": GONE_PID, "name": "python3", "memory_used_bytes": 8 * 2**30})
    backend = open_backend(monkeypatch, [dev], process_api=process_api)
    backend.devices()
    (proc,) = backend.sample(0).processes
    assert (proc.pid, proc.name, proc.memory_used_bytes) == (GONE_PID, "python3", 8 * 2**30)
    assert proc.type is None and "compute from graphics" in proc.unavailable["type"]
    assert proc.unavailable["user"] == PROCESS_NOT_VISIBLE  # psutil cannot see this pid: n/a, the GPU fields stay


def test_gfx_share_per_process_from_engine_time(monkeypatch):
    clock = Clock()
    dev = mi300x_with({"pid": os.getpid(), "name": "python3", "memory_used_bytes": 2**30, "utilization_pct": 60})
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([dev], clock=clock))
    backend = AmdSmiBackend()
    backend.processes = AmdProcesses(backend.smi, clock=clock)
    backend.devices()
    (first,) = backend.sample(0).processes
    assert first.utilization_pct is None and first.unavailable["utilization_pct"] == "needs a second reading"
    clock.now += 2.0
    (second,) = backend.sample(0).processes
    assert second.utilization_pct == pytest.approx(60, abs=0.5)  # 1.2 s of GFX engine time in 2 s
    assert second.user == psutil.Process().username()


def test_exited_processes_leave_no_engine_history(monkeypatch):
    running = mi300x_with({"pid": GONE_PID, "memory_used_bytes": 1})["samples"][0]
    # devices() reads the first sample; the two readings below get the next two
    backend = open_backend(monkeypatch, [dict(MI300X, samples=[running, running, dict(MI300X["samples"][0])])])
    backend.devices()
    assert len(backend.sample(0).processes) == 1 and backend.processes._engine_ns
    assert backend.sample(0).processes == [] and not backend.processes._engine_ns


def test_fan_ecc_and_nvidia_only_fields(monkeypatch):
    backend = open_backend(monkeypatch, [mi300x_with(fan_speed_pct=40, ecc_errors_uncorrected=3)])
    backend.devices()
    s = backend.sample(0)
    assert s.fan_speed_pct == pytest.approx(40, abs=0.5) and s.ecc_errors_uncorrected == 3
    assert s.performance_state is None and s.unavailable["performance_state"].startswith("NVIDIA only")
    assert s.mig_mode is None and "MIG" in s.unavailable["mig_mode"]
    assert "mm_activity" in s.unavailable["encoder_utilization_pct"]


def test_passively_cooled_board_has_no_fan(monkeypatch):
    backend = open_backend(monkeypatch, [MI300X])
    backend.devices()
    s = backend.sample(0)
    assert s.fan_speed_pct is None and "NOT_SUPPORTED" in s.unavailable["fan_speed_pct"]


def test_the_board_serial_is_read_when_amdsmi_gives_one(monkeypatch):
    """AMD's device-metrics-exporter labels its series with serial_number; gpudash serve joins on it."""
    with_serial = dict(MI300X, serial="692251001124")
    first, second = open_backend(monkeypatch, [with_serial, MI300X]).devices()
    assert first.extra == {"serial_number": "692251001124"}
    assert second.extra == {}  # amdsmi said N/A: no label value rather than "N/A"
