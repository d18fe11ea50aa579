"""Live telemetry, one device sample per scrape, for machines without a vendor exporter.

Turn it off (`gpudash serve --no-telemetry`, config serve.telemetry = false) where dcgm-exporter or AMD's
exporter already publishes it. A reading the driver could not give is absent, not 0.
"""

from __future__ import annotations

from gpudash.exporter.family import Family, per_mega
from gpudash.exporter.scrape import Scrape


def _ratio(pct: float | None) -> float | None:
    return None if pct is None else pct / 100.0


def families(scrape: Scrape) -> list[Family]:
    util = Family("gpudash_device_utilization_ratio", "Share of time the device was busy (0-1); the CPU: all cores")
    used = Family("gpudash_device_memory_used_bytes", "Device memory in use, bytes (the CPU: host memory)")
    busy = Family("gpudash_device_memory_busy_ratio", "Share of time device memory was read or written (0-1)")
    temp = Family("gpudash_device_temperature_celsius", "Device temperature, degrees Celsius")
    power = Family("gpudash_device_power_watts", "Device power draw, watts")
    limit = Family("gpudash_device_power_limit_watts", "Enforced power limit, watts")
    sm_clock = Family("gpudash_device_sm_clock_hertz", "Graphics/SM clock (the CPU: current frequency), hertz")
    mem_clock = Family("gpudash_device_memory_clock_hertz", "Memory clock, hertz")
    procs = Family("gpudash_device_processes", "Processes using the device, as the driver lists them")
    for device in scrape.devices:
        s = scrape.sample(device)
        labels = scrape.with_labels(device)
        util.add(labels, _ratio(s.utilization_pct))
        used.add(labels, s.memory_used_bytes)
        busy.add(labels, _ratio(s.memory_utilization_pct))
        temp.add(labels, s.temperature_c)
        power.add(labels, s.power_w)
        limit.add(labels, s.power_limit_w)
        sm_clock.add(labels, per_mega(s.sm_clock_mhz))
        mem_clock.add(labels, per_mega(s.memory_clock_mhz))
        if device.vendor != "cpu" and s.processes is not None:
            procs.add(labels, len(s.processes))
    return [util, used, busy, temp, power, limit, sm_clock, mem_clock, procs]
