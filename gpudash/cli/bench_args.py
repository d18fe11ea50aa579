"""What `gpudash bench` is asked to measure: the precisions, and the devices (checked against a preset)."""

from __future__ import annotations

import sys


def parse_precisions(text: str | None) -> list[str] | None:
    """--precisions as a list without repeats, or None for the default."""
    from gpudash.errors import UsageError
    from gpudash.precisions import PRECISIONS

    if text is None:
        return None
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError("--precisions: expected a comma-separated list, e.g. fp32,bf16")
    unknown = [p for p in names if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"--precisions: unknown precision '{unknown[0]}' (choose from {', '.join(PRECISIONS)})")
    return list(dict.fromkeys(names))


def choose_devices(ctx, machine, preset):
    """The devices to measure, and with a preset, a platform check for each."""
    from gpudash.errors import GpudashError, UsageError
    from gpudash.measure.calibration import platform as preset_platform
    from gpudash.measure.device_names import find_device

    if ctx.args.device:
        devices = [find_device(machine, d) for d in ctx.args.device]
    elif preset is not None:  # the preset says which kind of device it describes
        devices = [d for d in machine.devices if preset_platform.device_type(d) == preset.device] or machine.devices[:1]
    else:
        devices = list(machine.devices)
    if not devices:
        raise UsageError("no devices to benchmark")
    if preset is not None:
        for device in devices:
            facts = preset_platform.platform_of(machine, device)
            problems = preset_platform.mismatches(preset, facts)
            if not problems:
                continue
            if ctx.args.skip_platform_check:
                print(
                    f"gpudash: warning: --skip-platform-check: preset '{preset.name}' "
                    f"{problems[0]}; its peaks will give wrong efficiencies here",
                    file=sys.stderr,
                )
                continue
            print(preset_platform.mismatch_message(preset, facts, problems), file=sys.stderr)
            fits = ", ".join(preset_platform.presets_that_fit(facts)) or "none"
            raise GpudashError(f"--preset {preset.name}: platform mismatch ({problems[0]}); presets that fit: {fits}")
    return devices
