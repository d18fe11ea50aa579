"""NVML's health counters of one GPU, read in the contained child: ECC, retired pages, row remapping, the
recovery action, clock-event reasons, PCIe link, NVLink, persistence, power limits, temperatures, energy and the
XID events seen since the child opened NVML.

Only figures: gpudash.health judges them. Each reading is taken on its own, so one call that fails costs that
reading: its reason lands in `unavailable` under the counter's name ("NotSupported" where the part has no such
counter, which the judge reads as "not applicable", not as unknown).
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from gpudash.devices.fields import error_reason, read_field

# nvmlDeviceGetMemoryErrorCounter(handle, error type, counter type, location): the two places Hopper and later
# count ECC errors (NVML_MEMORY_LOCATION_SRAM = 7, NVML_MEMORY_LOCATION_DRAM = 2 in nvidia-ml-py).
_ECC_LOCATIONS = (("sram", "NVML_MEMORY_LOCATION_SRAM"), ("dram", "NVML_MEMORY_LOCATION_DRAM"))
_ECC_TYPES = (("uncorrected", "NVML_MEMORY_ERROR_TYPE_UNCORRECTED"), ("corrected", "NVML_MEMORY_ERROR_TYPE_CORRECTED"))
_ECC_COUNTERS = (("volatile", "NVML_VOLATILE_ECC"), ("aggregate", "NVML_AGGREGATE_ECC"))
# nvmlDeviceGetNvLinkErrorCounter counters, named as nvidia-smi nvlink -e names them.
_NVLINK_ERRORS = (
    ("replay", "NVML_NVLINK_ERROR_DL_REPLAY"),
    ("recovery", "NVML_NVLINK_ERROR_DL_RECOVERY"),
    ("crc_flit", "NVML_NVLINK_ERROR_DL_CRC_FLIT"),
    ("crc_data", "NVML_NVLINK_ERROR_DL_CRC_DATA"),
)
_RECOVERY_FIELD = 230  # NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (nvidia-ml-py 12.570+)
_XID_EVENT = 0x8  # nvmlEventTypeXidCriticalError
MAX_XID_EVENTS = 64  # per GPU kept in the child; older ones drop out


class XidWatch:
    """The XID events of every GPU since the child opened NVML, gathered without waiting (timeout 0)."""

    def __init__(self, nv: Any) -> None:
        self.nv = nv
        self.events: dict[int, list[dict[str, float]]] = {}  # GPU index -> [{"xid", "time"}]
        self.reason: str | None = None  # why events cannot be watched
        self._set: Any = None
        self._by_handle: dict[int, int] = {}

    def register(self, handles: list[Any]) -> None:
        try:
            self._set = self.nv.nvmlEventSetCreate()
        except Exception as exc:
            self.reason = error_reason(exc)
            return
        registered = 0
        for index, handle in enumerate(handles):
            if handle is None:
                continue
            try:
                self.nv.nvmlDeviceRegisterEvents(handle, _XID_EVENT, self._set)
                registered += 1
            except Exception as exc:  # NotSupported on GeForce under some drivers
                self.reason = error_reason(exc)
                continue
            self._by_handle[_handle_key(handle)] = index
        if registered:
            self.reason = None

    def drain(self) -> None:
        """Every event waiting now (the driver queues them between readings)."""
        if self._set is None:
            return
        for _ in range(256):  # a storm of events is cut off; the next reading takes the rest
            try:
                data = self.nv.nvmlEventSetWait(self._set, 0)
            except Exception:  # Timeout: nothing waiting
                return
            index = self._by_handle.get(_handle_key(data.device))
            if index is None:
                continue
            kept = self.events.setdefault(index, [])
            kept.append({"xid": int(data.eventData), "time": time.time()})
            del kept[:-MAX_XID_EVENTS]

    def close(self) -> None:
        if self._set is not None:
            try:
                self.nv.nvmlEventSetFree(self._set)
            except Exception:
                pass
            self._set = None


def _handle_key(handle: Any) -> int:
    """A handle's identity: the device pointer for ctypes handles, the object for others (the tests' fakes)."""
    value = getattr(handle, "value", None)
    if isinstance(value, int):
        return value
    index = getattr(handle, "index", None)
    return index if isinstance(index, int) else id(handle)


def read_counters(nv: Any, handle: Any, index: int, xids: XidWatch | None) -> dict[str, Any]:
    """{"counters": {...}, "unavailable": {counter: reason}} for one GPU."""
    missing: dict[str, str] = {}
    counters: dict[str, Any] = {}
    counters["ecc"] = _ecc(nv, handle, missing)
    sbe = read_field(missing, "retired_pages", lambda: nv.nvmlDeviceGetRetiredPages(handle, 0))
    dbe = read_field(missing, "retired_pages", lambda: nv.nvmlDeviceGetRetiredPages(handle, 1))
    pending = read_field(missing, "retired_pages", lambda: nv.nvmlDeviceGetRetiredPagesPendingStatus(handle))
    if "retired_pages" not in missing:
        counters["retired_pages"] = {"sbe": len(sbe or []), "dbe": len(dbe or []), "pending": bool(pending)}
    remap = read_field(missing, "remapped_rows", lambda: nv.nvmlDeviceGetRemappedRows(handle))
    if remap is not None:
        corrected, uncorrected, is_pending, failed = remap
        counters["remapped_rows"] = {
            "corrected": int(corrected),
            "uncorrected": int(uncorrected),
            "pending": bool(is_pending),
            "failed": bool(failed),
        }
    counters["recovery_action"] = _recovery_action(nv, handle, missing)
    reasons = _clock_event_reasons(nv, handle, missing)
    if reasons is not None:
        counters["clock_event_reasons"] = int(reasons)
    counters["pcie"] = _pcie(nv, handle, missing)
    counters["nvlink"] = _nvlink(nv, handle, missing)
    persistence = read_field(missing, "persistence_mode", lambda: nv.nvmlDeviceGetPersistenceMode(handle))
    if persistence is not None:
        counters["persistence_mode"] = bool(persistence)
    limit = read_field(missing, "power_limit", lambda: nv.nvmlDeviceGetPowerManagementLimit(handle))
    default = read_field(missing, "power_limit", lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(handle))
    if limit is not None and default is not None:
        counters["power_limit_w"] = {"current": limit / 1000, "default": default / 1000}
    temperature = read_field(
        missing, "temperature", lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)
    )
    slowdown = read_field(
        missing,
        "temperature",
        lambda: nv.nvmlDeviceGetTemperatureThreshold(handle, nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
    )
    if temperature is not None and slowdown is not None:
        counters["temperature_c"] = {"current": temperature, "slowdown": slowdown}
    energy = read_field(missing, "energy_mj", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(handle))
    if energy is not None:
        counters["energy_mj"] = int(energy)
    if xids is not None:
        xids.drain()
        if xids.reason is not None and not xids.events.get(index):
            missing["xid_events"] = xids.reason
        else:
            counters["xid_events"] = list(xids.events.get(index, []))
    return {"counters": {k: v for k, v in counters.items() if v is not None}, "unavailable": missing}


def _ecc(nv: Any, handle: Any, missing: dict[str, str]) -> dict[str, int] | None:
    found: dict[str, int] = {}
    reasons: list[str] = []
    for place, location in _ECC_LOCATIONS:
        for kind, error_type in _ECC_TYPES:
            for span, counter in _ECC_COUNTERS:
                try:
                    value = nv.nvmlDeviceGetMemoryErrorCounter(
                        handle, getattr(nv, error_type), getattr(nv, counter), getattr(nv, location)
                    )
                except Exception as exc:
                    reasons.append(error_reason(exc))
                    continue
                found[f"{span}_{place}_{kind}"] = int(value)
    if not found:
        missing["ecc"] = reasons[0] if reasons else "no ECC counter"
        return None
    return found


def _recovery_action(nv: Any, handle: Any, missing: dict[str, str]) -> int | None:
    try:
        value = nv.nvmlDeviceGetFieldValues(handle, [_RECOVERY_FIELD])[0]
    except Exception as exc:
        missing["recovery_action"] = error_reason(exc)
        return None
    status = getattr(value, "nvmlReturn", 0)
    if status != 0:  # the driver does not report this field (drivers before R570)
        missing["recovery_action"] = "NotSupported" if status == 3 else f"NVML error {status}"
        return None
    return int(value.value.uiVal)


def _clock_event_reasons(nv: Any, handle: Any, missing: dict[str, str]) -> int | None:
    call = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    return read_field(missing, "clock_event_reasons", lambda: call(handle))


def _pcie(nv: Any, handle: Any, missing: dict[str, str]) -> dict[str, int] | None:
    calls = {
        "gen": nv.nvmlDeviceGetCurrPcieLinkGeneration,
        "max_gen": nv.nvmlDeviceGetMaxPcieLinkGeneration,
        "width": nv.nvmlDeviceGetCurrPcieLinkWidth,
        "max_width": nv.nvmlDeviceGetMaxPcieLinkWidth,
    }
    values = {name: read_field(missing, "pcie", partial(call, handle)) for name, call in calls.items()}
    if any(v is None for v in values.values()):
        return None
    return {k: int(v) for k, v in values.items()}


def _nvlink(nv: Any, handle: Any, missing: dict[str, str]) -> list[dict[str, Any]] | None:
    """Every link the GPU has: its state and error counters; NotSupported on the first link means no NVLink."""
    links: list[dict[str, Any]] = []
    for link in range(int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            active = nv.nvmlDeviceGetNvLinkState(handle, link)
        except Exception as exc:
            reason = error_reason(exc)
            if not links:
                missing["nvlink"] = reason
                return None
            if reason in ("NotSupported", "InvalidArgument"):  # past the GPU's last link
                break
            links.append({"link": link, "active": None, "reason": reason})
            continue
        entry: dict[str, Any] = {"link": link, "active": bool(active)}
        for name, counter in _NVLINK_ERRORS:
            try:
                entry[name] = int(nv.nvmlDeviceGetNvLinkErrorCounter(handle, link, getattr(nv, counter)))
            except Exception:
                pass
        links.append(entry)
    return links
