"""NVIDIA adapter: nvidia-ml-py (module `pynvml`) to DeviceInfo and Sample.

pynvml is imported when the adapter opens, never at module import, so tests can put a fake
module in sys.modules and the real code below runs against it.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

from gpudash.devices.fields import error_reason, is_lost, lost_reason, read_field, text, version_text
from gpudash.devices.nvml_health import XidWatch, read_counters
from gpudash.devices.nvml_mig import mig_state
from gpudash.devices.nvml_processes import NvmlProcesses
from gpudash.devices.nvml_throughput import NvlinkRates, bar1, pcie
from gpudash.devices.unavailable import NvmlUnavailable as NvmlUnavailable
from gpudash.devices.unified_memory import UNIFIED, host_memory
from gpudash.models import LOST, DeviceInfo, Sample

_EXPLAIN = {
    "LibraryNotFound": "no NVIDIA driver library",
    "DriverNotLoaded": "NVIDIA kernel driver not loaded",
    "LibRmVersionMismatch": "NVIDIA driver upgraded without a reboot",
    "NoPermission": "no permission to query the NVIDIA driver",
}
_COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
_PSTATE_UNKNOWN = 32  # NVML_PSTATE_UNKNOWN
# Settings that change only when an administrator changes them: read again after this many seconds.
SETTINGS_TTL_S = 5.0


def _cuda_version(raw: int) -> str:
    # nvmlSystemGetCudaDriverVersion gives 12040 for CUDA 12.4.
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _enabled(value) -> str:
    return "enabled" if value else "disabled"


class NvmlBackend:
    name = "nvml"

    def __init__(self, wrap: Callable[[Any], Any] | None = None) -> None:
        """`wrap`, when given, stands between this adapter and the binding (gpudash.devices.contained notes
        each call in progress with it)."""
        try:
            binding = importlib.import_module("pynvml")
            self.nvml = wrap(binding) if wrap is not None else binding
            self.nvml.nvmlInit()
        except ImportError:
            raise NvmlUnavailable("nvidia-ml-py is not installed") from None
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, LibRmVersionMismatch...
            reason = error_reason(exc)
            raise NvmlUnavailable(f"{_EXPLAIN.get(reason, reason)} ({reason})") from exc
        self._handles: list = []
        self._lost: dict[int, str] = {}  # index -> the driver's reason, for GPUs lost at enumeration
        self._memory_v2: bool | None = None  # None until a v2 memory query has answered or failed
        self._settings: dict[int, tuple[float, dict, dict[str, str]]] = {}
        self.processes = NvmlProcesses(self.nvml)
        self._nvlink = NvlinkRates(self.nvml)  # NVLink rates: counters between two readings
        self._xids: XidWatch | None = None  # XID events, watched from the first health reading on
        self.unavailable: dict[str, str] = {}  # "driver" / "cuda_driver" -> reason
        self.driver_version = text(read_field(self.unavailable, "driver", self.nvml.nvmlSystemGetDriverVersion))
        raw = read_field(self.unavailable, "cuda_driver", self.nvml.nvmlSystemGetCudaDriverVersion)
        self.cuda_driver_version = _cuda_version(raw) if isinstance(raw, int) else None
        if raw is not None and self.cuda_driver_version is None:
            self.unavailable["cuda_driver"] = f"unexpected value {raw!r}"

    def devices(self) -> list[DeviceInfo]:
        nv = self.nvml
        count = nv.nvmlDeviceGetCount()
        found = []
        self._handles = []
        for index in range(count):
            try:
                handle = nv.nvmlDeviceGetHandleByIndex(index)
            except Exception as exc:  # enumerated, but the driver can no longer reach it
                self._handles.append(None)
                found.append(self._lost_device(index, error_reason(exc)))
                continue
            self._handles.append(handle)
            found.append(self._describe(index, handle))
        return found

    def _lost_device(self, index: int, reason: str) -> DeviceInfo:
        """A GPU NVML counted but cannot reach: no name, model or precision is invented for it."""
        self._handles[index] = None
        self._lost[index] = reason
        return DeviceInfo(
            vendor="nvidia",
            index=index,
            name=f"lost ({reason})",
            driver_version=self.driver_version,
            sources=["nvml"],
            unavailable={"device": reason},
            status=LOST,
        )

    def _describe(self, index: int, handle) -> DeviceInfo:
        nv = self.nvml
        missing: dict[str, str] = {}
        name = text(read_field(missing, "name", lambda: nv.nvmlDeviceGetName(handle)))
        if name is None and is_lost(missing["name"]):
            return self._lost_device(index, missing["name"])
        cc = read_field(missing, "compute_capability", lambda: nv.nvmlDeviceGetCudaComputeCapability(handle))
        pci = read_field(missing, "pci_bus_id", lambda: nv.nvmlDeviceGetPciInfo(handle).busId)
        memory = self._memory(handle, missing)
        if self.driver_version is None:
            missing["driver_version"] = self.unavailable.get("driver", "unavailable")
        return DeviceInfo(
            vendor="nvidia",
            index=index,
            name=name or f"n/a ({missing['name']})",
            uuid=text(read_field(missing, "uuid", lambda: nv.nvmlDeviceGetUUID(handle))),
            pci_bus_id=text(pci),
            compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
            memory_total_bytes=memory.total if memory is not None else None,
            driver_version=self.driver_version,
            max_clock_mhz=read_field(
                missing, "max_clock_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_SM)
            ),
            sources=["nvml"],
            unavailable=missing,
            extra={"cuda_driver": self.cuda_driver_version} if self.cuda_driver_version else {},
            vbios=version_text(lambda: nv.nvmlDeviceGetVbiosVersion(handle)),
        )

    def _memory(self, handle, missing: dict[str, str]):
        """v2 memory info (used excludes reserved) with the v1 fallback old drivers need; the version
        that answered is remembered so an old driver is not asked for v2 every second."""
        nv = self.nvml
        if self._memory_v2 is not False and hasattr(nv, "nvmlMemory_v2"):
            try:
                info = nv.nvmlDeviceGetMemoryInfo(handle, version=nv.nvmlMemory_v2)
            except Exception as exc:
                reason = error_reason(exc)
                if is_lost(reason):
                    missing["memory"] = reason
                    return None
                if reason == "FunctionNotFound":  # the driver predates v2: never ask it again
                    self._memory_v2 = False
            else:
                self._memory_v2 = True
                return info
        return read_field(missing, "memory", lambda: nv.nvmlDeviceGetMemoryInfo(handle))

    def sample(self, index: int) -> Sample:
        nv = self.nvml
        handle = self._handles[index] if index < len(self._handles) else None
        if handle is None:
            return lost_sample(self._lost.get(index, "no handle for this GPU"))
        missing: dict[str, str] = {}
        memory = self._memory(handle, missing)
        if is_lost(missing.get("memory")):  # fell off the bus since enumeration: stop asking
            return lost_sample(missing["memory"])
        source = None
        if memory is None and missing.get("memory") == "NotSupported":  # unified memory (GB10): the host's
            memory = host_memory()
            if memory is not None:
                source = UNIFIED
                del missing["memory"]
        util = read_field(missing, "utilization_pct", lambda: nv.nvmlDeviceGetUtilizationRates(handle))
        power_mw = read_field(missing, "power_w", lambda: nv.nvmlDeviceGetPowerUsage(handle))
        encoder = read_field(missing, "encoder_utilization_pct", lambda: nv.nvmlDeviceGetEncoderUtilization(handle))
        decoder = read_field(missing, "decoder_utilization_pct", lambda: nv.nvmlDeviceGetDecoderUtilization(handle))
        settings = self._read_settings(index, handle)
        mig_mode, mig_pending, mig_instances = mig_state(nv, handle, str(index), missing, self.processes, self._memory)
        processes = self.processes.read(handle, str(index), missing)
        if processes is None and mig_instances:  # no aggregate list (a non-root user under MIG, say)
            processes = [p for inst in mig_instances for p in inst.processes or []]
            missing.pop("processes", None)
        sample = Sample(
            memory_used_bytes=memory.used if memory is not None else None,
            memory_total_bytes=memory.total if memory is not None else None,
            utilization_pct=util.gpu if util is not None else None,
            memory_utilization_pct=util.memory if util is not None else None,
            temperature_c=read_field(
                missing, "temperature_c", lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)
            ),
            power_w=power_mw / 1000 if power_mw is not None else None,
            sm_clock_mhz=read_field(
                missing, "sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)
            ),
            memory_clock_mhz=read_field(
                missing, "memory_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_MEM)
            ),
            fan_speed_pct=read_field(missing, "fan_speed_pct", lambda: nv.nvmlDeviceGetFanSpeed(handle)),
            encoder_utilization_pct=encoder[0] if encoder is not None else None,
            decoder_utilization_pct=decoder[0] if decoder is not None else None,
            performance_state=self._pstate(handle, missing),
            mig_mode=mig_mode,
            mig_mode_pending=mig_pending,
            mig_instances=mig_instances,
            processes=processes,
            timestamp=time.time(),
            unavailable=missing,
            memory_source=source,
            **settings,
        )
        traffic = {
            **bar1(nv, handle, missing),
            **pcie(nv, handle, missing),
            **self._nvlink.read(index, handle, missing),
        }
        for name, value in traffic.items():  # BAR1, PCIe and NVLink (gpudash.devices.nvml_throughput)
            setattr(sample, name, value)
        missing.update({k: v for k, v in self._settings[index][2].items() if k not in missing})
        if memory is None:
            missing.setdefault("memory_used_bytes", missing.get("memory", "unavailable"))
        if util is None:
            missing["memory_utilization_pct"] = missing["utilization_pct"]
        lost = next((why for why in missing.values() if is_lost(why)), None)
        return lost_sample(lost) if lost else sample

    def _pstate(self, handle, missing: dict[str, str]) -> str | None:
        state = read_field(missing, "performance_state", lambda: self.nvml.nvmlDeviceGetPerformanceState(handle))
        if state is None:
            return None
        if state == _PSTATE_UNKNOWN:
            missing["performance_state"] = "unknown (NVML_PSTATE_UNKNOWN)"
            return None
        return f"P{state}"

    def _read_settings(self, index: int, handle) -> dict:
        """Power limit, persistence and compute mode, display and ECC: cached for SETTINGS_TTL_S."""
        cached = self._settings.get(index)
        now = time.monotonic()
        if cached is not None and now - cached[0] < SETTINGS_TTL_S:
            return dict(cached[1])
        nv = self.nvml
        missing: dict[str, str] = {}
        limit_mw = read_field(missing, "power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(handle))
        persistence = read_field(missing, "persistence_mode", lambda: nv.nvmlDeviceGetPersistenceMode(handle))
        display = read_field(missing, "display_active", lambda: nv.nvmlDeviceGetDisplayActive(handle))
        mode = read_field(missing, "compute_mode", lambda: nv.nvmlDeviceGetComputeMode(handle))
        ecc = read_field(
            missing,
            "ecc_errors_uncorrected",
            lambda: nv.nvmlDeviceGetTotalEccErrors(handle, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC),
        )
        values = {
            "power_limit_w": limit_mw / 1000 if limit_mw is not None else None,
            "persistence_mode": _enabled(persistence) if persistence is not None else None,
            "display_active": bool(display) if display is not None else None,
            "compute_mode": _COMPUTE_MODES.get(mode, f"unknown ({mode})") if mode is not None else None,
            "ecc_errors_uncorrected": ecc,
        }
        self._settings[index] = (now, values, missing)
        return dict(values)

    def health(self, index: int) -> dict:
        """The GPU's health counters (gpudash.devices.nvml_health); a lost GPU says so and nothing else."""
        handle = self._handles[index] if index < len(self._handles) else None
        if handle is None:
            return {"counters": {}, "unavailable": {"device": self._lost.get(index, "no handle for this GPU")}}
        if self._xids is None:
            self._xids = XidWatch(self.nvml)
            self._xids.register(self._handles)
        return read_counters(self.nvml, handle, index, self._xids)

    def close(self) -> None:
        if self._xids is not None:
            self._xids.close()
        try:
            self.nvml.nvmlShutdown()
        except Exception:
            pass


def lost_sample(reason: str) -> Sample:
    """A reading of a GPU the driver cannot reach: every field n/a, saying why."""
    return Sample(
        timestamp=time.time(),
        unavailable={"device": reason, "all": f"GPU lost: {lost_reason(reason)}"},
        status=LOST,
    )


__all__ = ["NvmlBackend", "NvmlUnavailable", "lost_sample"]
