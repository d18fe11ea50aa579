"""gpudash_device_info, memory total and the spec peaks: what each device is, by the tables."""

from __future__ import annotations

from gpudash.exporter.family import Family, info
from gpudash.exporter.scrape import Scrape
from gpudash.knowledge import arch_for, peaks_for

GIGA = 1e9


def families(scrape: Scrape) -> list[Family]:
    device_info = info(
        "gpudash_device_info",
        "A device as gpudash sees it: name, architecture, compute capability or gfx target, driver, VBIOS (value 1)",
    )
    memory = Family("gpudash_device_memory_total_bytes", "Device memory, bytes (the CPU: host memory)")
    peak = Family(
        "gpudash_spec_peak_flops_per_second",
        "Theoretical dense peak by precision, FLOP/s (int8: integer op/s); provenance spec (datasheet) or "
        "estimated (formula)",
    )
    for device in scrape.devices:
        arch = arch_for(device)
        device_info.add(
            scrape.with_labels(
                device,
                name=device.name,
                arch=arch.family,
                compute_capability=device.compute_capability or "",
                gfx_target=device.gfx_target or "",
                driver_version=device.driver_version or "",
                vbios_version=device.vbios or "",  # dcgm-exporter's DCGM_FI_DEV_VBIOS_VERSION; absent where not read
                torch_index="" if device.torch_index is None else str(device.torch_index),
            ),
            1,
        )
        memory.add(scrape.with_labels(device), device.memory_total_bytes)
        for precision, p in peaks_for(device).items():
            peak.add(scrape.with_labels(device, precision=precision, provenance=p.provenance), p.gflops * GIGA)
    return [device_info, memory, peak]
