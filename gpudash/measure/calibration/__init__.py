"""Calibration profiles (the multi-precision calibration document's format): saving, loading, comparing, and
the named parts' presets whose theoretical peaks a profile can be measured against.

The calibration seed's Python names are here too (seed_names.py), loaded on first use:
`from gpudash.measure.calibration import HardwareCalibration, detect_platform, validate_preset_platform,
calibrate_hardware`."""

from __future__ import annotations

from typing import Any

SEED_NAMES = ("HardwareCalibration", "detect_platform", "validate_preset_platform", "calibrate_hardware")
__all__ = list(SEED_NAMES)


def __getattr__(name: str) -> Any:
    if name in SEED_NAMES:  # lazily: importing the package for its profile code never discovers devices
        from gpudash.measure.calibration import seed_names

        return getattr(seed_names, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
