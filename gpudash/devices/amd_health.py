"""amdsmi's health counters of one GPU, read in the contained child: ECC per RAS block, bad (retired) pages, the
violation counters (on MI300 and later throttle_status reads N/A: AMD's docs point to these instead), the PCIe
link, XGMI links, the compute and memory partitions, and the energy counter.

Only figures, as gpudash.devices.nvml_health gives them; gpudash.health judges them.
"""

from __future__ import annotations

from typing import Any

from gpudash.devices.amd_partition import read_partition
from gpudash.devices.fields import error_reason, read_field

# RAS blocks whose ECC counts are worth a line each (amdsmi.AmdSmiGpuBlock names).
RAS_BLOCKS = ("UMC", "SDMA", "GFX", "MMHUB", "PCIE_BIF", "HDP", "XGMI_WAFL")
# amdsmi_get_violation_status: the "active now" flags, and the accumulated counters gpudash publishes.
VIOLATION_ACTIVE = ("active_prochot_thrm", "active_ppt_pwr", "active_socket_thrm", "active_vr_thrm", "active_hbm_thrm")
VIOLATION_COUNTERS = ("acc_prochot_thrm", "acc_ppt_pwr", "acc_socket_thrm", "acc_vr_thrm", "acc_hbm_thrm")


def _known(value: Any) -> Any:
    """amdsmi writes "N/A" for what it cannot read."""
    return None if value in ("N/A", None) else value


def read_counters(smi: Any, handle: Any) -> dict[str, Any]:
    """{"counters": {...}, "unavailable": {counter: reason}} for one GPU."""
    missing: dict[str, str] = {}
    counters: dict[str, Any] = {}
    blocks: dict[str, dict[str, int]] = {}
    reasons: list[str] = []
    for name in RAS_BLOCKS:
        block = getattr(getattr(smi, "AmdSmiGpuBlock", None), name, None)
        if block is None:
            continue
        try:
            counts = smi.amdsmi_get_gpu_ecc_count(handle, block)
        except Exception as exc:  # NOT_SUPPORTED for blocks the part has no RAS for
            reasons.append(error_reason(exc))
            continue
        blocks[name.lower()] = {
            k: int(v) for k, v in counts.items() if k in ("correctable_count", "uncorrectable_count", "deferred_count")
        }
    if blocks:
        counters["ecc_blocks"] = blocks
    else:
        missing["ecc_blocks"] = reasons[0] if reasons else "no RAS block reported"
    pages = read_field(missing, "bad_pages", lambda: smi.amdsmi_get_gpu_bad_page_info(handle))
    if pages is not None:
        counters["bad_pages"] = len(pages)
    violations = read_field(missing, "violations", lambda: smi.amdsmi_get_violation_status(handle))
    if isinstance(violations, dict):
        counters["violations"] = {
            k: _known(violations.get(k)) for k in VIOLATION_ACTIVE + VIOLATION_COUNTERS if k in violations
        }
    pcie = read_field(missing, "pcie", lambda: smi.amdsmi_get_pcie_info(handle))
    if isinstance(pcie, dict):
        static, metric = pcie.get("pcie_static") or {}, pcie.get("pcie_metric") or {}
        link = {
            "width": _known(metric.get("pcie_width")),
            "max_width": _known(static.get("max_pcie_width")),
            "speed_mts": _known(metric.get("pcie_speed")),
            "max_speed_mts": _known(static.get("max_pcie_speed")),
            "replay_count": _known(metric.get("pcie_replay_count")),
        }
        if link["width"] is None or link["max_width"] is None:
            missing["pcie"] = "N/A"
        else:
            counters["pcie"] = link
    xgmi = read_field(missing, "xgmi", lambda: smi.amdsmi_get_gpu_xgmi_link_status(handle))
    if isinstance(xgmi, dict):
        counters["xgmi"] = [str(s) for s in xgmi.get("status") or []]
    compute, memory = read_partition(smi, handle, missing)  # the adapter's read (gpudash.devices.amd_partition)
    if compute is not None or memory is not None:
        counters["partition"] = {"compute": compute, "memory": memory}
    energy = read_field(missing, "energy_mj", lambda: smi.amdsmi_get_energy_count(handle))
    if isinstance(energy, dict) and isinstance(_known(energy.get("energy_accumulator")), int):
        resolution_uj = energy.get("counter_resolution")
        if isinstance(resolution_uj, (int, float)):  # the accumulator counts in steps of counter_resolution uJ
            counters["energy_mj"] = int(energy["energy_accumulator"] * resolution_uj / 1000)
    return {"counters": counters, "unavailable": missing}
