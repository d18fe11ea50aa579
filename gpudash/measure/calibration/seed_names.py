"""The calibration seed's Python names, over gpudash's own calibration (thin: each is one of gpudash's paths).

HardwareCalibration          the profile (CalibrationProfile): metadata, precision_matrix, operation_profiles
detect_platform()            {"architecture", "has_cuda", "cuda_device_name"} of this machine, as the seed's CLI
validate_preset_platform()   True when the preset fits this machine; else prints the "Platform Mismatch" block
calibrate_hardware()         measure one device (gpudash's bench sweep in a child process) -> a profile, saved
                             when `output` is given; `operations` as the seed's --operations: matmul, memory
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from gpudash.devices import Machine, discover
from gpudash.measure.calibration import platform
from gpudash.measure.calibration.presets import Preset, get_preset
from gpudash.measure.calibration.profile import CalibrationProfile, save_profile
from gpudash.models import DeviceInfo

HardwareCalibration = CalibrationProfile  # the seed's name for the profile


def _device(machine: Machine, kind: str | None) -> DeviceInfo:
    """The first device of the kind ("cpu" or "cuda"), else the first device: what a preset would measure."""
    if kind is not None:
        for device in machine.devices:
            if platform.device_type(device) == kind:
                return device
    return machine.devices[0]


def detect_platform(machine: Machine | None = None) -> dict[str, Any]:
    """The seed's platform facts from gpudash's discovery: the architecture (x86_64, aarch64), whether a GPU
    torch can use is there (ROCm GPUs are "cuda" devices in torch, as in the seed), and the first one's name."""
    machine = machine or discover()
    gpus = [d for d in machine.devices if d.vendor != "cpu" and d.torch_index is not None]
    return {
        "architecture": platform.normalise_arch(machine.host.machine),
        "has_cuda": bool(gpus),
        "cuda_device_name": gpus[0].name if gpus else None,
    }


def validate_preset_platform(
    preset_name: str, preset_config: Preset | None = None, machine: Machine | None = None
) -> bool:
    """True when the preset fits the device it would measure here; False after printing the seed's "Platform
    Mismatch" block (to stderr, with the presets that fit). An unknown name raises UsageError."""
    preset = preset_config or get_preset(preset_name)
    machine = machine or discover()
    facts = platform.platform_of(machine, _device(machine, preset.device))
    problems = platform.mismatches(preset, facts)
    if problems:
        print(platform.mismatch_message(preset, facts, problems), file=sys.stderr)
    return not problems


def calibrate_hardware(
    preset: str | None = None,
    *,
    device: str | None = None,
    quick: bool = True,
    operations: Iterable[str] | None = None,
    precisions: Iterable[str] | None = None,
    output: str | None = None,
    skip_platform_check: bool = False,
    machine: Machine | None = None,
) -> CalibrationProfile:
    """Measure one device and return its profile (saved to `output` when given). `preset` supplies the named
    part's theoretical peaks and is checked against the platform first (ValueError on a mismatch unless
    `skip_platform_check`); `device` is a gpudash device key ("cpu:0", "nvidia:1"), default the preset's kind
    or the first device. The measurement is `gpudash bench`'s (docs/benchmarks.md)."""
    from gpudash.measure.bench import bench_machine
    from gpudash.measure.calibration.report import profile_from_report

    machine = machine or discover()
    chosen = get_preset(preset) if preset else None
    if device is not None:
        target = next((d for d in machine.devices if d.key == device), None)
        if target is None:
            raise ValueError(f"device {device!r}: not on this machine ({', '.join(d.key for d in machine.devices)})")
    else:
        target = _device(machine, chosen.device if chosen else None)
    if chosen is not None and not skip_platform_check:
        facts = platform.platform_of(machine, target)
        problems = platform.mismatches(chosen, facts)
        if problems:
            raise ValueError(f"preset {chosen.name!r} {problems[0]} (skip_platform_check=True runs it anyway)")
    reports = bench_machine(
        machine,
        devices=[target.key],
        precisions=precisions,
        mode="quick" if quick else "full",
        peak_overrides=chosen.peaks() if chosen else None,
        operations=operations,
    )
    profile = profile_from_report(reports[target.key], machine, chosen.name if chosen else None)
    if output is not None:
        save_profile(profile, output)
    return profile
