"""Processes on an NVIDIA GPU (or MIG device): compute and graphics, with the NVML API version fallback.

nvidia-ml-py's unversioned nvmlDeviceGetComputeRunningProcesses calls the driver's `_v3` symbol, which
drivers before R510 do not have (the binding then raises NVMLLibraryMismatchError). So each list is asked
for with `_v3`, then `_v2`, then the original unversioned symbol (v1), which current bindings no longer
wrap and which is therefore called through ctypes here with its two-field struct (pid, usedGpuMemory), as
laid out in nvml.h (nvmlProcessInfo_v1_t). The first version that answers is remembered per GPU.

A pid in both lists is "C+G", as nvidia-smi shows it. SM%, memory-controller, encoder and decoder shares
per process come from nvmlDeviceGetProcessUtilization, which returns samples newer than a timestamp.
"""

from __future__ import annotations

import ctypes
from typing import Any

from gpudash.devices.fields import error_reason
from gpudash.devices.host_processes import HostProcesses
from gpudash.models import COMPUTE, COMPUTE_AND_GRAPHICS, GRAPHICS, ProcessUsage

KINDS = (("Compute", COMPUTE), ("Graphics", GRAPHICS))
VERSIONS = ("_v3", "_v2", "_v1")  # "_v1" stands for the unversioned C symbol
UTILIZATION_FIELDS = (
    ("utilization_pct", "smUtil"),
    ("memory_utilization_pct", "memUtil"),
    ("encoder_utilization_pct", "encUtil"),
    ("decoder_utilization_pct", "decUtil"),
)
# Errors after which an older API version may still answer; any other error is the GPU's answer.
_TRY_OLDER = {"FunctionNotFound", "NotSupported", "not in this nvidia-ml-py"}
_NOT_AVAILABLE = 2**64 - 1  # NVML_VALUE_NOT_AVAILABLE_ulonglong (usedGpuMemory under WDDM)
_NO_INSTANCE = 0xFFFFFFFF  # gpuInstanceId / computeInstanceId outside MIG
MEMORY_NOT_REPORTED = "not reported by the driver (NVML_VALUE_NOT_AVAILABLE)"


class _ProcessInfoV1(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class _NotInBinding(Exception):
    def __str__(self) -> str:
        return "not in this nvidia-ml-py"


class ProcessListUnavailable(Exception):
    """No version of the NVML process API answered; the message lists what each one said."""


def api_reason(exc: BaseException) -> str:
    if isinstance(exc, _NotInBinding):
        return str(exc)
    if type(exc).__name__ == "NVMLLibraryMismatchError":  # the binding's word for a missing symbol
        return "FunctionNotFound"
    return error_reason(exc)


def _label(version: str) -> str:
    return version.lstrip("_")


class NvmlProcesses:
    """Reads process lists for one NVML backend; remembers the working API version and the last
    utilization timestamp per GPU (keyed by the caller: "0", "7/mig2")."""

    def __init__(self, nv: Any, host: HostProcesses | None = None) -> None:
        self.nv = nv
        self.host = host or HostProcesses()
        self._version: dict[tuple[str, str], str] = {}
        self._last_seen_us: dict[str, int] = {}

    def read(self, handle: Any, key: str, missing: dict[str, str]) -> list[ProcessUsage] | None:
        """Every process on the GPU, or None (with the reason under "processes") when no list answered."""
        by_pid: dict[int, ProcessUsage] = {}
        failures: dict[str, str] = {}
        for kind, letter in KINDS:
            try:
                listed = self.running(handle, key, kind)
            except ProcessListUnavailable as exc:
                failures[kind] = str(exc)
                continue
            for raw in listed:
                _merge(by_pid, raw, letter)
        if len(failures) == len(KINDS):
            missing["processes"] = "; ".join(f"{kind.lower()}: {why}" for kind, why in failures.items())
            return None
        for kind, why in failures.items():  # half a list is still worth showing, with the other half's reason
            missing[f"{kind.lower()}_processes"] = why
        procs = list(by_pid.values())
        if procs:
            self._utilization(handle, key, procs)
        for proc in procs:
            self.host.fill(proc)
        return procs

    def running(self, handle: Any, key: str, kind: str) -> list[Any]:
        """One kind's list ("Compute" or "Graphics"), newest API version first."""
        cached = self._version.get((key, kind))
        versions = VERSIONS[VERSIONS.index(cached) :] if cached else VERSIONS
        said = []
        for version in versions:
            try:
                listed = self._call(handle, kind, version)
            except Exception as exc:  # NVMLError_*, NVMLLibraryMismatchError, _NotInBinding
                reason = api_reason(exc)
                if reason not in _TRY_OLDER:
                    raise ProcessListUnavailable(reason) from exc
                said.append(f"{_label(version)} {reason}")
                continue
            self._version[(key, kind)] = version
            return listed
        raise ProcessListUnavailable(", ".join(said))

    def api_version(self, key: str, kind: str = "Compute") -> str | None:
        """The API version that answered last for this GPU ("v3", "v2", "v1"), None before any answer."""
        version = self._version.get((key, kind))
        return _label(version) if version else None

    def _call(self, handle: Any, kind: str, version: str) -> list[Any]:
        if version == "_v1":
            return self._call_v1(handle, kind)
        function = getattr(self.nv, f"nvmlDeviceGet{kind}RunningProcesses{version}", None)
        if function is None:
            raise _NotInBinding()
        return list(function(handle))

    def _call_v1(self, handle: Any, kind: str) -> list[Any]:
        nv = self.nv
        name = f"nvmlDeviceGet{kind}RunningProcesses"
        if not hasattr(nv, f"{name}_v3"):  # a binding older than the _v3 API: its unversioned call is the old one
            function = getattr(nv, name, None)
            if function is None:
                raise _NotInBinding()
            return list(function(handle))
        lookup = getattr(nv, "_nvmlGetFunctionPointer", None)
        if lookup is None:  # not the official binding (the unofficial `pynvml` package shadows it)
            raise _NotInBinding()
        symbol = lookup(name)
        count = ctypes.c_uint(0)
        status = symbol(handle, ctypes.byref(count), None)
        if status == nv.NVML_SUCCESS:
            return []
        if status != nv.NVML_ERROR_INSUFFICIENT_SIZE:
            raise nv.NVMLError(status)
        count.value = count.value * 2 + 5  # room for processes started between the two calls
        infos = (_ProcessInfoV1 * count.value)()
        status = symbol(handle, ctypes.byref(count), infos)
        if status != nv.NVML_SUCCESS:
            raise nv.NVMLError(status)
        return [infos[i] for i in range(count.value)]

    def _utilization(self, handle: Any, key: str, procs: list[ProcessUsage]) -> None:
        function = getattr(self.nv, "nvmlDeviceGetProcessUtilization", None)
        try:
            if function is None:
                raise _NotInBinding()
            samples = list(function(handle, self._last_seen_us.get(key, 0)))
        except Exception as exc:
            reason = api_reason(exc)
            if reason == "NotFound":  # NVML's answer when no process ran on the GPU since the timestamp
                reason = "no driver sample since the last reading (NotFound)"
            for proc in procs:
                for name, _ in UTILIZATION_FIELDS:
                    proc.unavailable[name] = reason
            return
        latest: dict[int, Any] = {}
        for sample in samples:
            if sample.pid not in latest or sample.timeStamp > latest[sample.pid].timeStamp:
                latest[sample.pid] = sample
        if samples:
            self._last_seen_us[key] = max(s.timeStamp for s in samples)
        for proc in procs:
            sample = latest.get(proc.pid)
            for name, attr in UTILIZATION_FIELDS:
                if sample is None:
                    proc.unavailable[name] = "no driver sample since the last reading"
                else:
                    setattr(proc, name, getattr(sample, attr))


def _merge(by_pid: dict[int, ProcessUsage], raw: Any, letter: str) -> None:
    pid = int(raw.pid)
    memory = raw.usedGpuMemory
    if memory is not None and memory >= _NOT_AVAILABLE:
        memory = None
    proc = by_pid.get(pid)
    if proc is None:
        proc = ProcessUsage(
            pid=pid,
            type=letter,
            memory_used_bytes=memory,
            gpu_instance_id=_instance(getattr(raw, "gpuInstanceId", None)),
            compute_instance_id=_instance(getattr(raw, "computeInstanceId", None)),
        )
        by_pid[pid] = proc
    else:
        if proc.type != letter:
            proc.type = COMPUTE_AND_GRAPHICS
        if memory is not None:  # both lists report the same process's memory: keep the larger figure
            proc.memory_used_bytes = max(memory, proc.memory_used_bytes or 0)
    if proc.memory_used_bytes is None:
        proc.unavailable["memory_used_bytes"] = MEMORY_NOT_REPORTED
    else:
        proc.unavailable.pop("memory_used_bytes", None)


def _instance(value: Any) -> int | None:
    if value is None or value == _NO_INSTANCE:
        return None
    return int(value)
