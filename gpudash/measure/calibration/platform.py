"""Checking a calibration preset against the platform it is used on.

A preset describes a device type ("cpu" or "cuda"; ROCm GPUs are "cuda" devices in torch) on an
architecture ("x86_64" or "aarch64"). Using one on a different platform would give wrong efficiencies,
so it stops with a "Platform Mismatch" message unless --skip-platform-check is given.
"""

from __future__ import annotations

import platform as _platform
from dataclasses import dataclass

from gpudash.measure.calibration.presets import PRESETS, Preset


def normalise_arch(machine: str | None) -> str:
    m = (machine or "").lower()
    return {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(m, m or "unknown")


def device_type(device) -> str:
    return "cpu" if device.vendor == "cpu" else "cuda"


@dataclass(frozen=True)
class PlatformFacts:
    architecture: str
    device: str  # "cpu" | "cuda"
    vendor: str
    device_name: str


def platform_of(machine, device) -> PlatformFacts:
    """The platform a preset is checked against: the machine's architecture (the snapshot's when replayed)."""
    arch = normalise_arch(getattr(machine.host, "machine", None) or _platform.machine())
    vendor = device.vendor
    if vendor == "cpu":
        raw = str((device.extra or {}).get("cpu_vendor") or "").lower()
        vendor = "intel" if "intel" in raw else "amd" if "amd" in raw else "arm" if arch == "aarch64" else raw
    return PlatformFacts(arch, device_type(device), vendor, device.name)


def mismatches(preset: Preset, facts: PlatformFacts) -> list[str]:
    """What does not fit, as phrases; empty when the preset fits."""
    out = []
    if preset.platform != facts.architecture:
        out.append(f"is designed for {preset.platform} architecture, but you are running on {facts.architecture}")
    if preset.device != facts.device:
        out.append(
            f"is for a {preset.device} device, but the device being measured is a {facts.device} device "
            f"({facts.device_name})"
        )
    elif preset.device == "cuda" and preset.vendor != facts.vendor:
        out.append(f"is for an {preset.vendor.upper()} GPU, but {facts.device_name} is {facts.vendor.upper()}")
    return out


def presets_that_fit(facts: PlatformFacts) -> list[str]:
    return [name for name, p in PRESETS.items() if not mismatches(p, facts)]


def mismatch_message(preset: Preset, facts: PlatformFacts, problems: list[str]) -> str:
    """The "Platform Mismatch" block, listing the presets that do fit."""
    fits = presets_that_fit(facts)
    rule = "=" * 80
    lines = [
        "Platform Validation:",
        f"  Current architecture: {facts.architecture}",
        f"  Expected architecture: {preset.platform}",
        f"  Device: {facts.device} ({facts.device_name})",
        "",
        rule,
        "ERROR: Platform Mismatch!",
        rule,
        "",
    ]
    lines += [f"Preset '{preset.name}' {p}." for p in problems]
    lines += ["", "This will produce incorrect calibration data!", "", "Available presets for your platform:"]
    lines += [f"  - {name}" for name in fits] or ["  (none)"]
    lines += ["", "Use --skip-platform-check to run anyway."]
    return "\n".join(lines)
