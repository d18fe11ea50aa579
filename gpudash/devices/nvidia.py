"""NVIDIA adapter: nvidia-ml-py (module `pynvml`) to DeviceInfo and Sample.

pynvml is imported when the adapter opens, never at module import, so tests can put a fake
module in sys.modules and the real code below runs against it.
"""

from __future__ import annotations

import importlib
import time

from gpudash.devices.fields import error_reason, process_name, read_field
from gpudash.models import DeviceInfo, ProcessUsage, Sample


class NvmlUnavailable(Exception):
    """NVML could not start (no driver, no library): the machine simply has no NVIDIA view."""


_EXPLAIN = {
    "LibraryNotFound": "no NVIDIA driver library",
    "DriverNotLoaded": "NVIDIA kernel driver not loaded",
    "LibRmVersionMismatch": "NVIDIA driver upgraded without a reboot",
    "NoPermission": "no permission to query the NVIDIA driver",
}


def _cuda_version(raw: int) -> str:
    # nvmlSystemGetCudaDriverVersion gives 12040 for CUDA 12.4.
    return f"{raw // 1000}.{(raw % 1000) // 10}"


class NvmlBackend:
    name = "nvml"

    def __init__(self) -> None:
        try:
            self.nvml = importlib.import_module("pynvml")
            self.nvml.nvmlInit()
        except ImportError:
            raise NvmlUnavailable("nvidia-ml-py is not installed") from None
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, LibRmVersionMismatch...
            reason = error_reason(exc)
            raise NvmlUnavailable(f"{_EXPLAIN.get(reason, reason)} ({reason})") from exc
        self._handles: list = []
        self.unavailable: dict[str, str] = {}
        self.driver_version = read_field(self.unavailable, "driver", self.nvml.nvmlSystemGetDriverVersion)
        raw = read_field(self.unavailable, "cuda_driver", self.nvml.nvmlSystemGetCudaDriverVersion)
        self.cuda_driver_version = _cuda_version(raw) if isinstance(raw, int) else None

    def devices(self) -> list[DeviceInfo]:
        nv = self.nvml
        count = nv.nvmlDeviceGetCount()
        found = []
        self._handles = []
        for index in range(count):
            try:
                handle = nv.nvmlDeviceGetHandleByIndex(index)
            except Exception as exc:  # a lost GPU still gets a card that says why
                self._handles.append(None)
                found.append(
                    DeviceInfo(
                        vendor="nvidia",
                        index=index,
                        name=f"GPU {index} (unavailable)",
                        sources=["nvml"],
                        unavailable={"device": error_reason(exc)},
                    )
                )
                continue
            self._handles.append(handle)
            found.append(self._describe(index, handle))
        return found

    def _describe(self, index: int, handle) -> DeviceInfo:
        nv = self.nvml
        missing: dict[str, str] = {}
        name = _text(read_field(missing, "name", lambda: nv.nvmlDeviceGetName(handle))) or f"NVIDIA GPU {index}"
        cc = read_field(missing, "compute_capability", lambda: nv.nvmlDeviceGetCudaComputeCapability(handle))
        pci = read_field(missing, "pci_bus_id", lambda: nv.nvmlDeviceGetPciInfo(handle).busId)
        memory = self._memory(handle, missing)
        return DeviceInfo(
            vendor="nvidia",
            index=index,
            name=name,
            uuid=_text(read_field(missing, "uuid", lambda: nv.nvmlDeviceGetUUID(handle))),
            pci_bus_id=_text(pci),
            compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
            memory_total_bytes=memory.total if memory is not None else None,
            driver_version=self.driver_version,
            max_clock_mhz=read_field(
                missing, "max_clock_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_SM)
            ),
            sources=["nvml"],
            unavailable=missing,
            extra={"cuda_driver": self.cuda_driver_version} if self.cuda_driver_version else {},
        )

    def _memory(self, handle, missing: dict[str, str]):
        """v2 memory info (used excludes reserved) with the v1 fallback old drivers need."""
        nv = self.nvml
        try:
            return nv.nvmlDeviceGetMemoryInfo(handle, version=nv.nvmlMemory_v2)
        except Exception:
            return read_field(missing, "memory", lambda: nv.nvmlDeviceGetMemoryInfo(handle))

    def sample(self, index: int) -> Sample:
        nv = self.nvml
        handle = self._handles[index] if index < len(self._handles) else None
        missing: dict[str, str] = {}
        if handle is None:
            return Sample(timestamp=time.time(), unavailable={"device": "GPU handle unavailable"})
        memory = self._memory(handle, missing)
        util = read_field(missing, "utilization_pct", lambda: nv.nvmlDeviceGetUtilizationRates(handle))
        power_mw = read_field(missing, "power_w", lambda: nv.nvmlDeviceGetPowerUsage(handle))
        limit_mw = read_field(missing, "power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(handle))
        sample = Sample(
            memory_used_bytes=memory.used if memory is not None else None,
            memory_total_bytes=memory.total if memory is not None else None,
            utilization_pct=util.gpu if util is not None else None,
            memory_utilization_pct=util.memory if util is not None else None,
            temperature_c=read_field(
                missing, "temperature_c", lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)
            ),
            power_w=power_mw / 1000 if power_mw is not None else None,
            power_limit_w=limit_mw / 1000 if limit_mw is not None else None,
            sm_clock_mhz=read_field(
                missing, "sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)
            ),
            memory_clock_mhz=read_field(
                missing, "memory_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_MEM)
            ),
            processes=self._processes(handle, missing),
            timestamp=time.time(),
            unavailable=missing,
        )
        if memory is None:
            missing.setdefault("memory_used_bytes", missing.get("memory", "unavailable"))
        if util is None:
            missing["memory_utilization_pct"] = missing["utilization_pct"]
        return sample

    def _processes(self, handle, missing: dict[str, str]) -> list[ProcessUsage] | None:
        procs = read_field(missing, "processes", lambda: self.nvml.nvmlDeviceGetComputeRunningProcesses(handle))
        if procs is None:
            return None
        # usedGpuMemory is None under MIG and WDDM: keep the pid, leave memory n/a.
        return [ProcessUsage(pid=p.pid, name=process_name(p.pid), memory_used_bytes=p.usedGpuMemory) for p in procs]

    def close(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:
            pass


def _text(value) -> str | None:
    if isinstance(value, bytes):  # very old bindings return bytes
        return value.decode(errors="replace")
    return value
