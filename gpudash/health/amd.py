"""AMD checks: the counters the contained amdsmi child read (gpudash.devices.amd_health), judged against the
thresholds. amdsmi says NOT_SUPPORTED (or N/A) for what a part lacks: "not applicable", not UNKNOWN."""

from __future__ import annotations

from typing import Any

from gpudash.health.catalog import CRITICAL, OK, UNKNOWN, WARN, HealthResult, result
from gpudash.health.thresholds import Thresholds

# Violation flags that mean heat or a failing supply; active_ppt_pwr (the power cap) is the benign one.
_HARMFUL = ("active_prochot_thrm", "active_socket_thrm", "active_vr_thrm", "active_hbm_thrm")


def _not_applicable(why: str) -> bool:
    return "NOT_SUPPORTED" in why or why == "N/A"


def judge(device: str, uuid: str | None, raw: dict[str, Any], limits: Thresholds) -> list[HealthResult]:
    counters: dict[str, Any] = raw.get("counters") or {}
    missing: dict[str, str] = raw.get("unavailable") or {}
    out: list[HealthResult] = []

    def add(check_id: str, severity: str | None, summary: str, evidence=None, action=None) -> None:
        out.append(result(check_id, device, severity, summary, evidence, action, uuid))

    def value(check_id: str, name: str) -> Any:
        if name in counters:
            return counters[name]
        why = missing.get(name) or missing.get("all") or "not reported"
        if _not_applicable(why):
            add(check_id, None, f"not applicable: amdsmi answers {why} on this GPU", {"amdsmi": why})
        else:
            add(check_id, UNKNOWN, f"could not be read: {why}", {"reason": why})
        return None

    blocks = value("amd.ecc", "ecc_blocks")
    if blocks is not None:
        uncorrected = {b: c["uncorrectable_count"] for b, c in blocks.items() if c.get("uncorrectable_count")}
        corrected = sum(c.get("correctable_count", 0) for c in blocks.values())
        evidence = {"blocks": blocks, "correctable_limit": limits.amd_ecc_correctable_max}
        if uncorrected:
            add("amd.ecc", CRITICAL, f"uncorrectable ECC errors in {', '.join(sorted(uncorrected))}", evidence)
        elif corrected > limits.amd_ecc_correctable_max:
            add(
                "amd.ecc",
                WARN,
                f"{corrected} correctable ECC errors (limit {limits.amd_ecc_correctable_max})",
                evidence,
            )
        else:
            add("amd.ecc", OK, f"{corrected} correctable, no uncorrectable ECC error", evidence)
    pages = value("amd.bad_pages", "bad_pages")
    if pages is not None:
        if pages:
            add("amd.bad_pages", WARN, f"{pages} memory pages retired", {"bad_pages": pages})
        else:
            add("amd.bad_pages", OK, "no retired page", {"bad_pages": 0})
    violations = value("amd.violations", "violations")
    if violations is not None:
        active = [k.removeprefix("active_") for k in _HARMFUL if violations.get(k) is True]
        if active:
            add("amd.violations", WARN, f"throttled now by {', '.join(active)}", violations)
        else:
            add("amd.violations", OK, "no thermal violation active", violations)
    pcie = value("amd.pcie", "pcie")
    if pcie is not None:
        if pcie["width"] < pcie["max_width"]:
            add("amd.pcie", CRITICAL, f"PCIe link x{pcie['width']}, the device can do x{pcie['max_width']}", pcie)
        elif pcie.get("speed_mts") and pcie.get("max_speed_mts") and pcie["speed_mts"] < pcie["max_speed_mts"]:
            add("amd.pcie", WARN, f"PCIe at {pcie['speed_mts']} MT/s of {pcie['max_speed_mts']}", pcie)
        else:
            add("amd.pcie", OK, f"PCIe link x{pcie['width']}", pcie)
    xgmi = value("amd.xgmi", "xgmi")
    if xgmi is not None:
        down = [i for i, s in enumerate(xgmi) if s == "D"]
        if not xgmi:
            add("amd.xgmi", None, "not applicable: no XGMI link", {"links": []})
        elif down:
            add("amd.xgmi", CRITICAL, f"XGMI link(s) {', '.join(map(str, down))} down", {"links": xgmi, "down": down})
        else:
            add("amd.xgmi", OK, f"{sum(s == 'U' for s in xgmi)} XGMI links up", {"links": xgmi})
    partition = value("amd.partition", "partition")
    if partition is not None:
        wanted = {"compute": limits.amd_compute_partition, "memory": limits.amd_memory_partition}
        wrong = [k for k, v in wanted.items() if v and partition.get(k) != v]
        evidence = {**partition, "expected": wanted}
        if wrong:
            shown = ", ".join(f"{k} {partition.get(k)} (expected {wanted[k]})" for k in wrong)
            add("amd.partition", WARN, f"partition mode differs: {shown}", evidence)
        else:
            add("amd.partition", OK, f"compute {partition.get('compute')}, memory {partition.get('memory')}", evidence)
    return out
