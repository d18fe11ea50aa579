"""NVIDIA checks: the counters the contained NVML child read (gpudash.devices.nvml_health), judged against the
thresholds. A counter the part does not have (NotSupported) is "not applicable"; one that could not be read
for another reason (a hang cut by the child's time limit, a permission) is UNKNOWN with the reason."""

from __future__ import annotations

from typing import Any

from gpudash.health.catalog import (
    CRITICAL,
    DRAIN,
    NONE,
    OK,
    REBOOT,
    RESET_GPU,
    SERVICE,
    UNKNOWN,
    WARN,
    HealthResult,
    result,
)
from gpudash.health.thresholds import Thresholds

NOT_APPLICABLE = ("NotSupported", "FunctionNotFound")
# NVML_GPU_RECOVERY_ACTION_* (nvidia-ml-py): the driver's own request, and the action it maps to.
RECOVERY_ACTIONS = {
    0: ("NONE", NONE),
    1: ("GPU_RESET", RESET_GPU),
    2: ("NODE_REBOOT", REBOOT),
    3: ("DRAIN_P2P", DRAIN),
    4: ("DRAIN_AND_RESET", RESET_GPU),
    5: ("RECOVER_IMEX_DOMAIN", DRAIN),
    6: ("BUS_RESET", RESET_GPU),
    7: ("SYSTEM_REBOOT", REBOOT),
}
# XIDs and the rung of NVIDIA's recovery ladder they call for (NVIDIA Xid catalog, "Resolution Bucket"):
# 79 fallen off the bus -> reboot; 64 and 65 failed remapping / retirement -> service; ECC and GSP faults
# -> reset the GPU; any other critical XID -> drain the node first.
XID_ACTIONS = {79: REBOOT, 64: SERVICE, 65: SERVICE, 48: RESET_GPU, 63: RESET_GPU, 94: RESET_GPU, 95: RESET_GPU}
XID_ACTIONS.update({119: RESET_GPU, 120: RESET_GPU, 74: RESET_GPU, 92: DRAIN})
# nvmlClocksEventReason* bits: the ones that mean trouble, and the benign ones (idle, application clocks,
# software power cap, sync boost, display clock): Azure NHC azure_gpu_clock_throttling.nhc warns on the first.
_HW_SLOWDOWN, _SW_THERMAL, _HW_THERMAL, _HW_POWER_BRAKE = 0x8, 0x20, 0x40, 0x80
_BAD_REASONS = {_HW_SLOWDOWN: "hw_slowdown", _HW_THERMAL: "hw_thermal", _HW_POWER_BRAKE: "hw_power_brake"}
_IDLE = 0x1


def nvlink_error_totals(links: list[dict[str, Any]]) -> dict[str, int]:
    """NVLink error counts summed over all links, by counter (replay, recovery, crc_flit, crc_data); a link
    that did not report a counter adds 0. The health verdict and the exporter's counter read the same totals."""
    names = ("replay", "recovery", "crc_flit", "crc_data")
    return {name: sum(int(link.get(name) or 0) for link in links) for name in names}


def reason_names(bits: int) -> list[str]:
    names = {
        0x1: "gpu_idle",
        0x2: "applications_clocks",
        0x4: "sw_power_cap",
        0x10: "sync_boost",
        0x20: "sw_thermal",
        0x100: "display_clock",
        **_BAD_REASONS,
    }
    return [name for bit, name in sorted(names.items()) if bits & bit]


class _Judge:
    def __init__(self, device: str, uuid: str | None, raw: dict[str, Any]) -> None:
        self.device, self.uuid = device, uuid
        self.counters: dict[str, Any] = raw.get("counters") or {}
        self.missing: dict[str, str] = raw.get("unavailable") or {}
        self.out: list[HealthResult] = []

    def add(self, check_id: str, severity: str | None, summary: str, evidence=None, action=None) -> None:
        self.out.append(result(check_id, self.device, severity, summary, evidence, action, self.uuid))

    def value(self, check_id: str, name: str) -> Any:
        """The counter, or None after adding the not-applicable or UNKNOWN result that says why it is missing."""
        if name in self.counters:
            return self.counters[name]
        why = self.missing.get(name) or self.missing.get("all") or "not reported"
        if why in NOT_APPLICABLE:
            self.add(check_id, None, f"not applicable: NVML answers {why} on this GPU", {"nvml": why})
        else:
            self.add(check_id, UNKNOWN, f"could not be read: {why}", {"reason": why})
        return None


def judge(device: str, uuid: str | None, raw: dict[str, Any], limits: Thresholds) -> list[HealthResult]:
    """Every NVIDIA check on one GPU's counters ({"counters", "unavailable"})."""
    j = _Judge(device, uuid, raw)
    _ecc(j, limits)
    _retired(j)
    _remapped(j, limits)
    _recovery(j)
    _xid_events(j, limits)
    _clocks(j)
    _pcie(j)
    _nvlink(j)
    _settings(j, limits)
    return j.out


def xid_action(xids: list[int], limits: Thresholds) -> tuple[str, str]:
    """(severity, action) for a set of XIDs: CRITICAL with the highest rung any critical one calls for."""
    critical = [x for x in xids if x in limits.xid_critical]
    if not critical:
        return (WARN, NONE) if xids else (OK, NONE)
    ladder = (DRAIN, RESET_GPU, REBOOT, SERVICE)
    return CRITICAL, max((XID_ACTIONS.get(x, DRAIN) for x in critical), key=ladder.index)


def _ecc(j: _Judge, limits: Thresholds) -> None:
    ids = (
        "gpu.ecc.sram_uncorrected",
        "gpu.ecc.sram_corrected",
        "gpu.ecc.sram_aggregate_uncorrected",
        "gpu.ecc.dram_uncorrected",
        "gpu.ecc.dram_corrected",
    )
    ecc = j.counters.get("ecc")
    if ecc is None:
        for check_id in ids:
            j.value(check_id, "ecc")
        return
    rules = (
        (ids[0], "volatile_sram_uncorrected", 0, CRITICAL),
        (ids[1], "volatile_sram_corrected", limits.ecc_sram_corrected_max, WARN),
        (ids[2], "aggregate_sram_uncorrected", limits.ecc_sram_aggregate_uncorrected_max, CRITICAL),
        (ids[3], "volatile_dram_uncorrected", 0, WARN),
        (ids[4], "volatile_dram_corrected", limits.ecc_dram_corrected_max, WARN),
    )
    for check_id, name, limit, bad in rules:
        count = ecc.get(name)
        if count is None:
            j.add(check_id, None, "not applicable: NVML has no such ECC counter on this GPU")
        elif count > limit:
            j.add(check_id, bad, f"{name.replace('_', ' ')}: {count} (limit {limit})", {name: count, "limit": limit})
        else:
            j.add(check_id, OK, f"{name.replace('_', ' ')}: {count}", {name: count, "limit": limit})


def _retired(j: _Judge) -> None:
    pages = j.value("gpu.retired_pages", "retired_pages")
    if pages is None:
        return
    if pages["pending"]:
        j.add("gpu.retired_pages", WARN, "a page retirement is pending: reset the GPU to apply it", pages)
    else:
        j.add("gpu.retired_pages", OK, f"{pages['sbe']} single-bit and {pages['dbe']} double-bit pages retired", pages)


def _remapped(j: _Judge, limits: Thresholds) -> None:
    rows = j.value("gpu.row_remap", "remapped_rows")
    if rows is None:
        return
    evidence = {**rows, "uncorrected_limit": limits.remapped_uncorrected_max}
    if rows["failed"]:
        j.add("gpu.row_remap", CRITICAL, "a row remapping failed", evidence, SERVICE)
    elif rows["uncorrected"] > limits.remapped_uncorrected_max:
        summary = (
            f"{rows['uncorrected']} rows remapped for uncorrected errors (limit {limits.remapped_uncorrected_max})"
        )
        j.add("gpu.row_remap", CRITICAL, summary, evidence, SERVICE)
    elif rows["pending"]:
        j.add("gpu.row_remap", CRITICAL, "a row remapping is pending: reset the GPU to apply it", evidence, RESET_GPU)
    else:
        j.add("gpu.row_remap", OK, f"{rows['corrected']} + {rows['uncorrected']} rows remapped, none pending", evidence)


def _recovery(j: _Judge) -> None:
    code = j.value("gpu.recovery_action", "recovery_action")
    if code is None:
        return
    name, action = RECOVERY_ACTIONS.get(code, (f"unknown ({code})", DRAIN))
    evidence = {"recovery_action": code, "name": name}
    if code == 0:
        j.add("gpu.recovery_action", OK, "the driver asks for no recovery action", evidence)
    else:
        j.add("gpu.recovery_action", CRITICAL, f"the driver asks for {name}", evidence, action)


def _xid_events(j: _Judge, limits: Thresholds) -> None:
    events = j.value("gpu.xid.events", "xid_events")
    if events is None:
        return
    xids = sorted({int(e["xid"]) for e in events})
    severity, action = xid_action(xids, limits)
    summary = f"XID {', '.join(map(str, xids))} seen while gpudash ran" if xids else "no XID since gpudash started"
    j.add("gpu.xid.events", severity, summary, {"xids": xids, "count": len(events)}, action)


def _clocks(j: _Judge) -> None:
    bits = j.value("gpu.clock_events", "clock_event_reasons")
    if bits is None:
        return
    evidence = {"clock_event_reasons": bits, "reasons": reason_names(bits)}
    bad = [name for bit, name in _BAD_REASONS.items() if bits & bit]
    if bad:
        j.add("gpu.clock_events", WARN, f"clocks held down by {', '.join(bad)}", evidence)
    elif bits & _SW_THERMAL:
        j.add("gpu.clock_events", WARN, "clocks held down by sw_thermal (software thermal slowdown)", evidence, NONE)
    else:
        j.add("gpu.clock_events", OK, f"no harmful clock event ({', '.join(evidence['reasons']) or 'none'})", evidence)


def _pcie(j: _Judge) -> None:
    link = j.counters.get("pcie")
    if link is None:
        j.value("gpu.pcie.width", "pcie")
        j.value("gpu.pcie.gen", "pcie")
        return
    if link["width"] < link["max_width"]:
        j.add("gpu.pcie.width", CRITICAL, f"PCIe link x{link['width']}, the device can do x{link['max_width']}", link)
    else:
        j.add("gpu.pcie.width", OK, f"PCIe link x{link['width']}", link)
    idle = bool((j.counters.get("clock_event_reasons") or 0) & _IDLE)
    if link["gen"] >= link["max_gen"]:
        j.add("gpu.pcie.gen", OK, f"PCIe gen {link['gen']}", link)
    elif idle:  # an idle GPU lowers its link's generation to save power: not a fault
        j.add("gpu.pcie.gen", OK, f"PCIe gen {link['gen']} of {link['max_gen']} while idle (power saving)", link)
    else:
        j.add("gpu.pcie.gen", WARN, f"PCIe gen {link['gen']} under load, the device can do gen {link['max_gen']}", link)


def _nvlink(j: _Judge) -> None:
    links = j.counters.get("nvlink")
    if links is None:
        j.value("gpu.nvlink.down", "nvlink")
        j.value("gpu.nvlink.errors", "nvlink")
        return
    down = [link["link"] for link in links if link.get("active") is False]
    evidence = {"links": len(links), "down": down}
    if down:
        j.add("gpu.nvlink.down", CRITICAL, f"NVLink link(s) {', '.join(map(str, down))} inactive", evidence)
    else:
        j.add("gpu.nvlink.down", OK, f"{len(links)} NVLink links active", evidence)
    totals = nvlink_error_totals(links)
    if any(totals.values()):
        shown = ", ".join(f"{k} {v}" for k, v in totals.items() if v)
        j.add("gpu.nvlink.errors", WARN, f"NVLink errors since the driver loaded: {shown}", totals)
    else:
        j.add("gpu.nvlink.errors", OK, "no NVLink error counted", totals)


def _settings(j: _Judge, limits: Thresholds) -> None:
    persistence = j.value("gpu.persistence", "persistence_mode")
    if persistence is not None:
        if persistence:
            j.add("gpu.persistence", OK, "persistence mode on", {"persistence_mode": True})
        else:
            j.add("gpu.persistence", WARN, "persistence mode off (nvidia-smi -pm 1)", {"persistence_mode": False})
    power = j.value("gpu.power_limit", "power_limit_w")
    if power is not None:
        if power["current"] < power["default"]:
            summary = f"power limit {power['current']:g} W, below the default {power['default']:g} W"
            j.add("gpu.power_limit", WARN, summary, power)
        else:
            j.add("gpu.power_limit", OK, f"power limit {power['current']:g} W", power)
    temp = j.value("gpu.temperature", "temperature_c")
    if temp is not None:
        evidence = {**temp, "margin": limits.temperature_margin_c}
        if temp["current"] >= temp["slowdown"]:
            j.add("gpu.temperature", CRITICAL, f"{temp['current']} °C, at the slowdown threshold", evidence)
        elif temp["current"] >= temp["slowdown"] - limits.temperature_margin_c:
            j.add("gpu.temperature", WARN, f"{temp['current']} °C, near slowdown at {temp['slowdown']} °C", evidence)
        else:
            j.add("gpu.temperature", OK, f"{temp['current']} °C (slowdown at {temp['slowdown']} °C)", evidence)
