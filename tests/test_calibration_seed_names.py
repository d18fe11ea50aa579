"""Issue 22: the calibration seed's --operations option and its Python names (HardwareCalibration,
detect_platform, validate_preset_platform, calibrate_hardware), over gpudash's own bench and profiles."""

from __future__ import annotations

import json

import pytest
from conftest import H100, snapshot_dict

from gpudash.cli import main
from gpudash.devices import discover
from gpudash.measure.calibration import (
    HardwareCalibration,
    calibrate_hardware,
    detect_platform,
    validate_preset_platform,
)
from gpudash.measure.calibration.profile import CalibrationProfile, load_profile


def test_the_names_are_gpudash_s_own():
    assert HardwareCalibration is CalibrationProfile


def test_detect_platform_on_a_replayed_gpu_machine(tmp_path):
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(snapshot_dict(dict(H100, torch_index=0))))
    machine = discover(replay=str(path))
    facts = detect_platform(machine)
    assert facts["has_cuda"] is True and facts["cuda_device_name"] == H100["name"]
    assert facts["architecture"] in ("x86_64", "aarch64")


def test_validate_preset_platform_here(no_vendor_libs, capsys):
    machine = discover(include_torch=False)
    arch = detect_platform(machine)["architecture"]
    fitting, other = ("i7-12700k", "jetson-orin-nano") if arch == "x86_64" else ("ampere-altra-max", "i7-12700k")
    assert validate_preset_platform(fitting, machine=machine) is True
    assert validate_preset_platform(other, machine=machine) is False
    assert "ERROR: Platform Mismatch!" in capsys.readouterr().err


def test_calibrate_hardware_measures_only_the_memory_when_asked(no_vendor_libs, tmp_path):
    """A real (short) run on this CPU: memory only, so no matmul sweep runs and the profile says why."""
    out = tmp_path / "cpu.json"
    profile = calibrate_hardware(device="cpu:0", operations=["memory"], output=str(out))
    assert isinstance(profile, HardwareCalibration)
    assert profile.memory_bandwidth and profile.memory_bandwidth[0]["status"] == "ok"
    assert not profile.operation_profiles  # nothing timed in the sweep
    results = profile.precision_matrix.results
    assert all(r.verdict == "not_run" for r in results.values())
    assert "--operations leaves out matmul" in results["fp32"].failure_reason
    assert load_profile(out).memory_bandwidth == profile.memory_bandwidth


def test_calibrate_hardware_refuses_a_mismatched_preset(no_vendor_libs):
    machine = discover(include_torch=False)
    other = "jetson-orin-nano" if detect_platform(machine)["architecture"] == "x86_64" else "i7-12700k"
    with pytest.raises(ValueError, match="skip_platform_check"):
        calibrate_hardware(other, machine=machine)


def test_operations_option(no_vendor_libs, capsys):
    assert main(["bench", "--operations", "gemm"]) == 2
    assert "--operations: unknown operation(s) gemm: expected matmul, memory" in capsys.readouterr().err
    assert main(["bench", "--operations", "memory", "--json", "--no-plugins"]) == 0
    dev = json.loads(capsys.readouterr().out)["devices"][0]
    assert dev["results"] == [] and dev["memory_bandwidth"]
