"""The real amdsmi adapter against a fake amdsmi module."""

import io
import sys
from contextlib import redirect_stdout

import pytest
from conftest import MI300X
from fakes import AmdSmiLibraryException, make_fake_amdsmi

from gpudash.devices.amd import AmdSmiBackend, AmdSmiUnavailable


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
