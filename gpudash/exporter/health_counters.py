"""The raw health counters behind the verdicts, as the driver child read them (gpudash.devices.nvml_health,
amd_health): ECC errors, retired pages and remapped rows, XIDs, clock-event (throttle) reasons, PCIe link,
NVLink and XGMI links, and the energy counter. A counter the GPU does not report is absent, never 0.

Counters that only grow are `_total` counters (ECC, NVLink errors, energy in joules); the others are gauges.
"""

from __future__ import annotations

from typing import Any

from gpudash.exporter.family import Counter, Family, per_mega
from gpudash.exporter.health_cache import HealthReading
from gpudash.exporter.scrape import Scrape
from gpudash.health.nvidia import nvlink_error_totals, reason_names


def families(scrape: Scrape, reading: HealthReading) -> list[Any]:
    ecc = Counter(
        "gpudash_device_ecc_errors_total",
        "ECC errors counted by the driver: NVIDIA by location (sram, dram), error_type and counter (volatile since "
        "the driver loaded, aggregate over the board's life); AMD by RAS block and error_type",
    )
    retired = Family(
        "gpudash_device_retired_pages", "Retired memory pages by cause (single_bit, double_bit; AMD bad_page)"
    )
    retire_pending = Family("gpudash_device_retired_pages_pending", "1 when a page retirement waits for a GPU reset")
    rows = Family("gpudash_device_remapped_rows", "Rows remapped by the cause (corrected, uncorrected errors)")
    rows_pending = Family("gpudash_device_remapped_rows_pending", "1 when a row remapping waits for a GPU reset")
    rows_failed = Family("gpudash_device_remapped_rows_failed", "1 when a row remapping failed (service the board)")
    xids = Family("gpudash_device_xid_events", "XID events the driver reported since gpudash started (newest 64 kept)")
    last_xid = Family("gpudash_device_last_xid", "The most recent XID the driver reported since gpudash started")
    reasons = Family("gpudash_device_clock_event_reasons", "NVML's clock-event (throttle) reason bit mask")
    active = Family(
        "gpudash_device_clock_event_active",
        "1 when a clock-event (throttle) reason holds the clocks now, by reason (NVIDIA: hw_slowdown, hw_thermal, "
        "hw_power_brake, sw_thermal, sw_power_cap, gpu_idle, ...; AMD violations: prochot_thrm, ppt_pwr, ...)",
    )
    gen = Family("gpudash_device_pcie_link_generation", "Current PCIe link generation")
    gen_max = Family("gpudash_device_pcie_link_generation_max", "Highest PCIe link generation the GPU supports")
    width = Family("gpudash_device_pcie_link_width", "Current PCIe link width, lanes")
    width_max = Family("gpudash_device_pcie_link_width_max", "Widest PCIe link the GPU supports, lanes")
    speed = Family("gpudash_device_pcie_link_speed_transfers_per_second", "Current PCIe link speed (AMD), T/s")
    links = Family("gpudash_device_links", "NVLink or XGMI links by kind and state (active, inactive)")
    link_errors = Counter(
        "gpudash_device_nvlink_errors_total", "NVLink errors since the driver loaded, by counter (all links)"
    )
    energy = Counter("gpudash_device_energy_joules_total", "Energy the GPU consumed since the driver loaded, joules")
    devices = {d.key: d for d in scrape.devices}
    for key, raw in reading.counters.items():
        device = devices.get(key)
        if device is None:
            continue
        c = raw.get("counters") or {}
        labels = scrape.with_labels(device)
        for name, value in (c.get("ecc") or {}).items():  # "volatile_sram_corrected"
            counter, location, error_type = name.split("_", 2)
            ecc.add({**labels, "location": location, "error_type": error_type, "counter": counter}, value)
        for block, counts in (c.get("ecc_blocks") or {}).items():
            for kind in ("correctable", "uncorrectable", "deferred"):
                error_type = {"correctable": "corrected", "uncorrectable": "uncorrected"}.get(kind, kind)
                ecc.add({**labels, "block": block, "error_type": error_type}, counts.get(f"{kind}_count"))
        pages = c.get("retired_pages")
        if pages:
            retired.add({**labels, "cause": "single_bit"}, pages["sbe"])
            retired.add({**labels, "cause": "double_bit"}, pages["dbe"])
            retire_pending.add(labels, pages["pending"])
        if "bad_pages" in c:
            retired.add({**labels, "cause": "bad_page"}, c["bad_pages"])
        remapped = c.get("remapped_rows")
        if remapped:
            rows.add({**labels, "cause": "corrected"}, remapped["corrected"])
            rows.add({**labels, "cause": "uncorrected"}, remapped["uncorrected"])
            rows_pending.add(labels, remapped["pending"])
            rows_failed.add(labels, remapped["failed"])
        events = c.get("xid_events")
        if events is not None:
            xids.add(labels, len(events))
            if events:
                last_xid.add(labels, events[-1]["xid"])
        bits = c.get("clock_event_reasons")
        if bits is not None:
            reasons.add(labels, bits)
            on = set(reason_names(bits))
            for name in reason_names(0xFFFF):
                active.add({**labels, "reason": name}, name in on)
        for flag, value in (c.get("violations") or {}).items():
            if flag.startswith("active_") and isinstance(value, bool):
                active.add({**labels, "reason": flag.removeprefix("active_")}, value)
        link = c.get("pcie")
        if link:
            gen.add(labels, link.get("gen"))
            gen_max.add(labels, link.get("max_gen"))
            width.add(labels, link.get("width"))
            width_max.add(labels, link.get("max_width"))
            speed.add(labels, per_mega(link.get("speed_mts")))
        nvlink = c.get("nvlink")
        if nvlink is not None:
            up = sum(entry.get("active") is True for entry in nvlink)
            links.add({**labels, "kind": "nvlink", "state": "active"}, up)
            links.add({**labels, "kind": "nvlink", "state": "inactive"}, len(nvlink) - up)
            for counter, total in nvlink_error_totals(nvlink).items():
                link_errors.add({**labels, "counter": counter}, total)
        xgmi = c.get("xgmi")
        if xgmi:
            links.add({**labels, "kind": "xgmi", "state": "active"}, sum(s == "U" for s in xgmi))
            links.add({**labels, "kind": "xgmi", "state": "inactive"}, sum(s == "D" for s in xgmi))
        if c.get("energy_mj") is not None:
            energy.add(labels, c["energy_mj"] / 1000)
    return [
        ecc,
        retired,
        retire_pending,
        rows,
        rows_pending,
        rows_failed,
        xids,
        last_xid,
        reasons,
        active,
        gen,
        gen_max,
        width,
        width_max,
        speed,
        links,
        link_errors,
        energy,
    ]
