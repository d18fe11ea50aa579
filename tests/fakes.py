"""Fake vendor bindings driven by snapshot data, so the real adapter code runs without a GPU.

Each fake is a whole module object put into sys.modules (monkeypatch.setitem), the way gpustat fakes
NVML. Errors are injected per (device, function name); device None means every device, and a MIG device
is (gpu index, MIG index). A reading a snapshot sample marks unavailable with an NVML word (its
`unavailable` {"power_w": "NotSupported"}) makes the matching NVML call raise that error.

The fake NVML's versioned process calls and nvmlDeviceGetProcessUtilization are nvidia-ml-py's own
functions, re-bound to a fake `_nvmlGetFunctionPointer`: the binding's ctypes code runs against C-like
fake driver functions, which export only the process API versions the simulated driver has.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import time
import types
from collections import namedtuple
from pathlib import Path

import pynvml as real_pynvml  # its exception classes, constants and ctypes code

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "snapshots"
GONE_PID = 2**22 + 12345  # above Linux's largest pid_max: never a live process on the test machine

Memory = namedtuple("Memory", "total free used")
Utilization = namedtuple("Utilization", "gpu memory")
Pci = namedtuple("Pci", "busId")
Attributes = namedtuple("Attributes", "multiprocessorCount")
OldProcess = namedtuple("OldProcess", "pid usedGpuMemory")  # what bindings before _v2 returned

# Sample field -> the NVML call that reads it (for `unavailable` words in snapshot samples).
FIELD_CALLS = {
    "utilization_pct": "nvmlDeviceGetUtilizationRates",
    "temperature_c": "nvmlDeviceGetTemperature",
    "power_w": "nvmlDeviceGetPowerUsage",
    "power_limit_w": "nvmlDeviceGetEnforcedPowerLimit",
    "fan_speed_pct": "nvmlDeviceGetFanSpeed",
    "encoder_utilization_pct": "nvmlDeviceGetEncoderUtilization",
    "decoder_utilization_pct": "nvmlDeviceGetDecoderUtilization",
    "performance_state": "nvmlDeviceGetPerformanceState",
    "persistence_mode": "nvmlDeviceGetPersistenceMode",
    "display_active": "nvmlDeviceGetDisplayActive",
    "compute_mode": "nvmlDeviceGetComputeMode",
    "ecc_errors_uncorrected": "nvmlDeviceGetTotalEccErrors",
    "mig_mode": "nvmlDeviceGetMigMode",
}
_COMPUTE_MODES = {"default": 0, "exclusive_thread": 1, "prohibited": 2, "exclusive_process": 3}
_ULLONG_MAX = 2**64 - 1
_NO_INSTANCE = 0xFFFFFFFF
PROCESS_API_VERSIONS = ("v1", "v2", "v3")


def load_example(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def nvml_error(word: str) -> Exception | None:
    """NVMLError_NotSupported() for 'NotSupported'; None when the word is not an NVML error name."""
    cls = getattr(real_pynvml, f"NVMLError_{word}", None)
    return cls() if isinstance(cls, type) and issubclass(cls, real_pynvml.NVMLError) else None


def _raiser(errors, key, func):
    exc = errors.get((key, func)) or errors.get((None, func))
    if exc is not None:
        raise exc


def _key(handle):
    mig = getattr(handle, "mig", None)
    return handle.index if mig is None else (handle.index, mig)


def make_fake_pynvml(
    devices: list[dict],
    *,
    driver="550.54.15",
    cuda=12040,
    errors=None,
    init_error: Exception | None = None,
    memory_v2: bool = True,
    process_api: str = "v3",
    old_binding: bool = False,
    strings_as_bytes: bool | None = None,
    faults: dict | None = None,
) -> types.ModuleType:
    """A pynvml module over `devices` (snapshot device dicts; their samples cycle per reading).

    process_api: the newest process API the simulated driver exports ("v3"; "v2" for drivers before
    R510; "v1" for drivers with neither versioned symbol). old_binding: nvidia-ml-py from before the
    versioned process calls (no _v2/_v3 functions, no nvmlMemory_v2, strings as bytes).
    faults: NVML function name -> "hang" (never returns), "abort" (os.abort(), as a failing assertion in the
    driver library would) or "print" (writes to the process's stdout, then answers); "hang-while:PATH" hangs
    only while PATH exists, so a test can end the hang.
    """
    errors = errors or {}
    as_bytes = old_binding if strings_as_bytes is None else strings_as_bytes
    exported = PROCESS_API_VERSIONS[: PROCESS_API_VERSIONS.index(process_api) + 1]
    nv = types.ModuleType("pynvml")
    for name in dir(real_pynvml):
        if name.startswith(("NVMLError", "NVML_", "NVMLLibraryMismatchError")):
            setattr(nv, name, getattr(real_pynvml, name))
    if not old_binding:
        nv.nvmlMemory_v2 = real_pynvml.nvmlMemory_v2
    streams = [itertools.cycle(d.get("samples") or [{}]) for d in devices]
    current = [dict(d.get("samples", [{}])[0]) if d.get("samples") else {} for d in devices]
    calls: list[str] = []
    nv.calls = calls

    def out(value):
        return value.encode() if as_bytes and isinstance(value, str) else value

    def api(func_name):
        def wrap(fn):
            def inner(*args, **kwargs):
                calls.append(func_name)
                key = _key(args[0]) if args and isinstance(args[0], types.SimpleNamespace) else None
                _raiser(errors, key, func_name)
                if isinstance(key, int):
                    _raise_marked(key, func_name)
                return fn(*args, **kwargs)

            setattr(nv, func_name, inner)
            return inner

        return wrap

    def _raise_marked(index, func_name):
        """A sample's unavailable {"field": "NotSupported"} -> the field's call raises NotSupported."""
        for field, why in (current[index].get("unavailable") or {}).items():
            if FIELD_CALLS.get(field) == func_name and nvml_error(why) is not None:
                raise nvml_error(why)

    def sample_of(h):
        return current[h.index]

    def mig_of(h):
        for instance in sample_of(h).get("mig_instances") or []:
            if instance["index"] == h.mig:
                return instance
        raise real_pynvml.NVMLError_NotFound()

    def processes_of(h, kind: str) -> list[dict]:
        holder = mig_of(h) if getattr(h, "mig", None) is not None else sample_of(h)
        wanted = "C" if kind == "Compute" else "G"
        return [p for p in holder.get("processes") or [] if wanted in (p.get("type") or "C")]

    @api("nvmlInit")
    def _init():
        if init_error is not None:
            raise init_error

    api("nvmlShutdown")(lambda: None)
    api("nvmlSystemGetDriverVersion")(lambda: out(driver))
    api("nvmlSystemGetCudaDriverVersion")(lambda: cuda)
    api("nvmlDeviceGetCount")(lambda: len(devices))

    @api("nvmlDeviceGetHandleByIndex")
    def _handle(i):
        _raiser(errors, i, "handle")
        current[i] = next(streams[i])
        return types.SimpleNamespace(index=i)

    @api("nvmlDeviceGetName")
    def _name(h):
        if getattr(h, "mig", None) is not None:
            return out(mig_of(h)["name"])
        return out(devices[h.index]["name"])

    @api("nvmlDeviceGetUUID")
    def _uuid(h):
        if getattr(h, "mig", None) is not None:
            return out(mig_of(h).get("uuid") or f"MIG-0000-{h.index}-{h.mig}")
        return out(devices[h.index].get("uuid") or f"GPU-0000-{h.index}")

    api("nvmlDeviceGetPciInfo")(
        lambda h: Pci(out(devices[h.index].get("pci_bus_id") or f"00000000:{h.index + 0x17:02X}:00.0"))
    )
    api("nvmlDeviceGetCudaComputeCapability")(
        lambda h: tuple(int(x) for x in devices[h.index]["compute_capability"].split("."))
    )
    api("nvmlDeviceGetMaxClockInfo")(lambda h, kind: devices[h.index].get("max_clock_mhz") or 1980)

    @api("nvmlDeviceGetVbiosVersion")
    def _vbios(h):
        vbios = devices[h.index].get("vbios")
        if vbios is None:  # as on parts (and VMs) that do not report it
            raise real_pynvml.NVMLError_NotSupported()
        return out(vbios)

    @api("nvmlDeviceGetMemoryInfo")
    def _memory(h, version=None):
        if version is not None and (not memory_v2 or old_binding):
            raise real_pynvml.NVMLError_FunctionNotFound()
        if getattr(h, "mig", None) is not None:
            instance = mig_of(h)
            total, used = instance["memory_total_bytes"], instance.get("memory_used_bytes", 0)
            return Memory(total=total, free=total - used, used=used)
        current[h.index] = next(streams[h.index])  # one reading of the GPU starts with its memory
        total = devices[h.index]["memory_total_bytes"]
        used = current[h.index].get("memory_used_bytes", 0)
        return Memory(total=total, free=total - used, used=used)

    def reading(field, default):
        def read(h, *_):
            value = sample_of(h).get(field)
            if value is None:
                if isinstance(default, Exception):
                    raise default
                return default
            return value

        return read

    util = reading("utilization_pct", 0)
    mem_util = reading("memory_utilization_pct", 0)
    api("nvmlDeviceGetUtilizationRates")(lambda h: Utilization(util(h), mem_util(h)))
    api("nvmlDeviceGetTemperature")(reading("temperature_c", 40))
    api("nvmlDeviceGetPowerUsage")(lambda h: int(reading("power_w", 100)(h) * 1000))
    api("nvmlDeviceGetEnforcedPowerLimit")(
        lambda h: int((sample_of(h).get("power_limit_w") or devices[h.index].get("power_limit_w", 700)) * 1000)
    )
    api("nvmlDeviceGetClockInfo")(
        lambda h, kind: sample_of(h).get(
            "sm_clock_mhz" if kind == real_pynvml.NVML_CLOCK_SM else "memory_clock_mhz", 1000
        )
    )
    # Datacentre boards have no fan of their own: NotSupported unless the sample gives a speed.
    api("nvmlDeviceGetFanSpeed")(reading("fan_speed_pct", real_pynvml.NVMLError_NotSupported()))
    api("nvmlDeviceGetEncoderUtilization")(lambda h: [reading("encoder_utilization_pct", 0)(h), 167000])
    api("nvmlDeviceGetDecoderUtilization")(lambda h: [reading("decoder_utilization_pct", 0)(h), 167000])
    api("nvmlDeviceGetPerformanceState")(lambda h: int(reading("performance_state", "P0")(h).lstrip("P")))
    api("nvmlDeviceGetPersistenceMode")(lambda h: int(reading("persistence_mode", "enabled")(h) == "enabled"))
    api("nvmlDeviceGetDisplayActive")(lambda h: int(bool(reading("display_active", False)(h))))
    api("nvmlDeviceGetComputeMode")(lambda h: _COMPUTE_MODES[reading("compute_mode", "default")(h)])
    api("nvmlDeviceGetTotalEccErrors")(lambda h, error_type, counter: reading("ecc_errors_uncorrected", 0)(h))

    # BAR1 and PCIe throughput: NotSupported unless the device gives bar1_total_bytes / the sample a PCIe rate.
    @api("nvmlDeviceGetBAR1MemoryInfo")
    def _bar1(h):
        total = devices[h.index].get("bar1_total_bytes")
        if total is None:
            raise real_pynvml.NVMLError_NotSupported()
        used = sample_of(h).get("bar1_used_bytes", 0)
        return types.SimpleNamespace(bar1Total=total, bar1Free=total - used, bar1Used=used)

    @api("nvmlDeviceGetPcieThroughput")
    def _pcie_throughput(h, counter):
        name = "pcie_tx_bytes_per_s" if counter == real_pynvml.NVML_PCIE_UTIL_TX_BYTES else "pcie_rx_bytes_per_s"
        rate = sample_of(h).get(name)
        if rate is None:
            raise real_pynvml.NVMLError_NotSupported()
        return int(rate // 1024)  # NVML's KB/s

    @api("nvmlDeviceGetMigMode")
    def _mig_mode(h):
        sample = sample_of(h)
        if "mig_mode" not in sample:  # boards without MIG answer NotSupported
            raise real_pynvml.NVMLError_NotSupported()
        current_mode = sample["mig_mode"] == "enabled"
        return [int(current_mode), int(sample.get("mig_mode_pending", sample["mig_mode"]) == "enabled")]

    api("nvmlDeviceGetMaxMigDeviceCount")(lambda h: devices[h.index].get("mig_max_instances", 7))

    @api("nvmlDeviceGetMigDeviceHandleByIndex")
    def _mig_handle(h, index):
        handle = types.SimpleNamespace(index=h.index, mig=index)
        mig_of(handle)  # NotFound for an empty slot
        return handle

    api("nvmlDeviceGetGpuInstanceId")(lambda h: mig_of(h)["gpu_instance_id"])
    api("nvmlDeviceGetComputeInstanceId")(lambda h: mig_of(h)["compute_instance_id"])
    api("nvmlDeviceGetAttributes")(lambda h: Attributes(mig_of(h)["multiprocessors"]))

    # The simulated driver's C functions, as nvidia-ml-py calls them through _nvmlGetFunctionPointer.
    def c_running(kind: str, symbol: str):
        def c_function(handle, count_ref, infos):
            failure = errors.get((_key(handle), symbol)) or errors.get((None, symbol))
            if failure is not None:
                return failure.value
            procs = processes_of(handle, kind)
            count = count_ref._obj
            if infos is None or count.value < len(procs):
                status = real_pynvml.NVML_SUCCESS if not procs else real_pynvml.NVML_ERROR_INSUFFICIENT_SIZE
                count.value = len(procs)
                return status
            names = {name for name, _ in type(infos[0])._fields_} if procs else set()
            for slot, proc in zip(infos, procs):
                slot.pid = proc["pid"]
                memory = proc.get("memory_used_bytes")
                slot.usedGpuMemory = _ULLONG_MAX if memory is None else memory
                if "gpuInstanceId" in names:
                    gi, ci = proc.get("gpu_instance_id"), proc.get("compute_instance_id")
                    slot.gpuInstanceId = _NO_INSTANCE if gi is None else gi
                    slot.computeInstanceId = _NO_INSTANCE if ci is None else ci
            count.value = len(procs)
            return real_pynvml.NVML_SUCCESS

        return c_function

    last_utilization_us = {}

    def c_process_utilization(handle, samples, count_ref, last_seen):
        key = _key(handle)
        marked = [
            p["unavailable"]["utilization_pct"]
            for p in processes_of(handle, "Compute") + processes_of(handle, "Graphics")
            if nvml_error((p.get("unavailable") or {}).get("utilization_pct", ""))
        ]
        if marked:
            return nvml_error(marked[0]).value
        now_us = last_utilization_us.get(key, int(time.time() * 1e6)) + 1
        procs = [
            p
            for p in processes_of(handle, "Compute") + processes_of(handle, "Graphics")
            if p.get("utilization_pct") is not None
        ]
        if not procs or getattr(last_seen, "value", last_seen) >= now_us:
            return real_pynvml.NVML_ERROR_NOT_FOUND
        count = count_ref._obj
        if samples is None:
            count.value = len(procs)
            return real_pynvml.NVML_ERROR_INSUFFICIENT_SIZE
        for slot, proc in zip(samples, procs):
            slot.pid, slot.timeStamp = proc["pid"], now_us
            slot.smUtil = proc["utilization_pct"]
            slot.memUtil = proc.get("memory_utilization_pct") or 0
            slot.encUtil = proc.get("encoder_utilization_pct") or 0
            slot.decUtil = proc.get("decoder_utilization_pct") or 0
        last_utilization_us[key] = now_us
        count.value = len(procs)
        return real_pynvml.NVML_SUCCESS

    symbols = {"nvmlDeviceGetProcessUtilization": c_process_utilization}
    suffixes = {"v1": "", "v2": "_v2", "v3": "_v3"}
    for kind in ("Compute", "Graphics"):
        for version in exported:
            symbol = f"nvmlDeviceGet{kind}RunningProcesses{suffixes[version]}"
            symbols[symbol] = c_running(kind, symbol)

    def function_pointer(name):
        if name not in symbols:
            raise real_pynvml.NVMLError(real_pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        return symbols[name]

    nv._nvmlGetFunctionPointer = function_pointer
    binding = dict(vars(real_pynvml), _nvmlGetFunctionPointer=function_pointer)

    def rebound(name):
        real = getattr(real_pynvml, name)
        real = getattr(real, "__wrapped__", real)
        return types.FunctionType(real.__code__, binding, real.__name__, real.__defaults__, real.__closure__)

    api("nvmlDeviceGetProcessUtilization")(rebound("nvmlDeviceGetProcessUtilization"))
    for kind in ("Compute", "Graphics"):
        name = f"nvmlDeviceGet{kind}RunningProcesses"
        if old_binding:  # the unversioned call was the v1 symbol; its structs had pid and memory only
            api(name)(_old_binding_call(nv, name))
            continue
        for suffix in ("_v2", "_v3"):
            api(name + suffix)(rebound(name + suffix))
        versioned = getattr(nv, f"{name}_v3")
        # The current binding's unversioned call: _v3, FunctionNotFound turned into NVMLLibraryMismatchError.
        api(name)(real_pynvml.throwOnVersionMismatch(lambda h, call=versioned: call(h)))
    _health_api(api, devices)
    for func_name, fault in (faults or {}).items():
        setattr(nv, func_name, _faulty(getattr(nv, func_name), fault))
    return nv


# A healthy H100's health counters, as the fake NVML answers them unless a device's "health" says otherwise.
# Retired pages answer NotSupported, as on parts that use row remapping instead; NVLink NotSupported (a PCIe board).
HEALTHY_NVML = {
    "ecc": {},  # every counter 0
    "retired_pages": "NotSupported",
    "remapped_rows": {"corrected": 0, "uncorrected": 0, "pending": False, "failed": False},
    "recovery_action": 0,
    "clock_event_reasons": 0x1,  # idle
    "pcie": {"gen": 5, "max_gen": 5, "width": 16, "max_width": 16},
    "nvlink": "NotSupported",
    "power_limit_w": {"current": 700, "default": 700},
    "slowdown_c": 90,
    "energy_mj": 123_456_789,
    "xids": [],  # XID events the driver will report, each once
}


class _EventSet:
    """An event set (not a SimpleNamespace: the fake's `api` takes those for device handles)."""

    def __init__(self):
        self.registered: set[int] = set()


def _health_api(api, devices):
    """The NVML calls gpudash.devices.nvml_health makes, over each device's "health" dict (HEALTHY_NVML's keys;
    an NVML word such as "NotSupported" in place of a value makes the call raise that error)."""
    health = [{**HEALTHY_NVML, **(d.get("health") or {})} for d in devices]
    queued = [list(h["xids"]) for h in health]

    def value(h, name):
        found = health[h.index][name]
        if isinstance(found, str) and nvml_error(found) is not None:
            raise nvml_error(found)
        return found

    def ecc(h, error_type, counter, location):
        counts = value(h, "ecc")
        span = "volatile" if counter == real_pynvml.NVML_VOLATILE_ECC else "aggregate"
        place = {real_pynvml.NVML_MEMORY_LOCATION_SRAM: "sram", real_pynvml.NVML_MEMORY_LOCATION_DRAM: "dram"}[location]
        kind = "uncorrected" if error_type == real_pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED else "corrected"
        return counts.get(f"{span}_{place}_{kind}", 0)

    api("nvmlDeviceGetMemoryErrorCounter")(ecc)
    api("nvmlDeviceGetRetiredPages")(
        lambda h, cause: list(range(value(h, "retired_pages")["sbe" if cause == 0 else "dbe"]))
    )
    api("nvmlDeviceGetRetiredPagesPendingStatus")(lambda h: int(value(h, "retired_pages")["pending"]))

    @api("nvmlDeviceGetRemappedRows")
    def _rows(h):
        rows = value(h, "remapped_rows")
        return (rows["corrected"], rows["uncorrected"], int(rows["pending"]), int(rows["failed"]))

    started = time.monotonic()
    throughput = {
        real_pynvml.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX: "tx",
        real_pynvml.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: "rx",
    }

    def nvlink_kib(h, field_id, number):
        """A link's data counter in KiB: its "tx_kib_per_s"/"rx_kib_per_s" times the seconds since the fake began."""
        rate = link(h, number).get(f"{throughput[field_id]}_kib_per_s", 0)
        return int(rate * (time.monotonic() - started))

    @api("nvmlDeviceGetFieldValues")
    def _fields(h, ids):
        if ids and isinstance(ids[0], tuple) and ids[0][0] in throughput:  # NVLink data counters, per link
            return [
                types.SimpleNamespace(
                    fieldId=f, scopeId=n, nvmlReturn=0, value=types.SimpleNamespace(ullVal=nvlink_kib(h, f, n))
                )
                for f, n in ids
            ]
        found = health[h.index]["recovery_action"]
        error = nvml_error(found) if isinstance(found, str) else None
        return [
            types.SimpleNamespace(
                fieldId=i,
                nvmlReturn=error.value if error else 0,
                value=types.SimpleNamespace(uiVal=0 if error else found),
            )
            for i in ids
        ]

    api("nvmlDeviceGetCurrentClocksEventReasons")(lambda h: value(h, "clock_event_reasons"))
    api("nvmlDeviceGetCurrPcieLinkGeneration")(lambda h: value(h, "pcie")["gen"])
    api("nvmlDeviceGetMaxPcieLinkGeneration")(lambda h: value(h, "pcie")["max_gen"])
    api("nvmlDeviceGetCurrPcieLinkWidth")(lambda h: value(h, "pcie")["width"])
    api("nvmlDeviceGetMaxPcieLinkWidth")(lambda h: value(h, "pcie")["max_width"])

    def link(h, number):
        links = value(h, "nvlink")
        if number >= len(links):
            raise real_pynvml.NVMLError_NotSupported()
        return links[number]

    api("nvmlDeviceGetNvLinkState")(lambda h, number: int(link(h, number).get("active", True)))
    names = {
        real_pynvml.NVML_NVLINK_ERROR_DL_REPLAY: "replay",
        real_pynvml.NVML_NVLINK_ERROR_DL_RECOVERY: "recovery",
        real_pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT: "crc_flit",
        real_pynvml.NVML_NVLINK_ERROR_DL_CRC_DATA: "crc_data",
    }
    api("nvmlDeviceGetNvLinkErrorCounter")(lambda h, number, counter: link(h, number).get(names[counter], 0))
    api("nvmlDeviceGetPowerManagementLimit")(lambda h: int(value(h, "power_limit_w")["current"] * 1000))
    api("nvmlDeviceGetPowerManagementDefaultLimit")(lambda h: int(value(h, "power_limit_w")["default"] * 1000))
    api("nvmlDeviceGetTemperatureThreshold")(lambda h, kind: value(h, "slowdown_c"))
    api("nvmlDeviceGetTotalEnergyConsumption")(lambda h: value(h, "energy_mj"))
    api("nvmlEventSetCreate")(_EventSet)

    @api("nvmlDeviceRegisterEvents")
    def _register(h, kinds, event_set):
        event_set.registered.add(h.index)

    @api("nvmlEventSetWait")
    def _wait(event_set, timeout_ms):
        for index in sorted(event_set.registered):
            if queued[index]:
                xid = queued[index].pop(0)
                return types.SimpleNamespace(device=types.SimpleNamespace(index=index), eventType=0x8, eventData=xid)
        raise real_pynvml.NVMLError_Timeout()

    api("nvmlEventSetFree")(lambda event_set: None)


def _faulty(call, fault: str):
    import os

    def faulty(*args, **kwargs):
        if fault == "hang" or (fault.startswith("hang-while:") and os.path.exists(fault.split(":", 1)[1])):
            time.sleep(3600)
        elif fault == "abort":
            os.abort()
        elif fault == "print":
            os.write(1, b"driver noise on stdout\n")
        return call(*args, **kwargs)

    return faulty


def _old_binding_call(nv, name):
    def call(handle):
        symbol = nv._nvmlGetFunctionPointer(name)
        count = ctypes.c_uint(0)
        status = symbol(handle, ctypes.byref(count), None)
        if status == real_pynvml.NVML_SUCCESS:
            return []
        infos = (_OldInfo * (count.value + 5))()
        count.value += 5
        status = symbol(handle, ctypes.byref(count), infos)
        if status != real_pynvml.NVML_SUCCESS:
            raise real_pynvml.NVMLError(status)
        return [OldProcess(infos[i].pid, infos[i].usedGpuMemory) for i in range(count.value)]

    return call


class _OldInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, code: int, name: str = "AMDSMI_STATUS_NOT_SUPPORTED"):
        super().__init__(f"Error code: {code} | {name}")
        self.err_code = code


def make_fake_amdsmi(
    devices: list[dict],
    *,
    errors=None,
    init_error: Exception | None = None,
    driver="6.8.5",
    process_api: str = "dicts",
    clock=time.monotonic,
) -> types.ModuleType:
    """An amdsmi module over snapshot device dicts.

    process_api "dicts": amdsmi_get_gpu_process_list returns one dict per process (amdsmi 7.0);
    "handles": it returns handles for amdsmi_get_gpu_process_info (older amdsmi). Each process's
    cumulative GFX engine time grows at its sample's utilization_pct, measured on `clock`.
    """
    errors = errors or {}
    smi = types.ModuleType("amdsmi")
    smi.AmdSmiException = AmdSmiException
    smi.AmdSmiLibraryException = AmdSmiLibraryException
    smi.AmdSmiClkType = types.SimpleNamespace(GFX="GFX", MEM="MEM")
    smi.AmdSmiTemperatureType = types.SimpleNamespace(EDGE="EDGE", HOTSPOT="HOTSPOT", JUNCTION="JUNCTION")
    smi.AmdSmiTemperatureMetric = types.SimpleNamespace(CURRENT="CURRENT")
    streams = [itertools.cycle(d.get("samples") or [{}]) for d in devices]
    current = [{} for _ in devices]
    started = clock()

    def api(func_name):
        def wrap(fn):
            def inner(*args):
                index = args[0].index if args and isinstance(args[0], types.SimpleNamespace) else None
                _raiser(errors, index, func_name)
                return fn(*args)

            setattr(smi, func_name, inner)
            return inner

        return wrap

    @api("amdsmi_init")
    def _init(*_):
        if init_error is not None:
            raise init_error

    api("amdsmi_shut_down")(lambda: None)
    api("amdsmi_get_processor_handles")(lambda: [types.SimpleNamespace(index=i) for i in range(len(devices))])
    api("amdsmi_get_gpu_asic_info")(
        lambda h: {
            "market_name": devices[h.index]["name"],
            "target_graphics_version": devices[h.index]["gfx_target"],
            "num_compute_units": devices[h.index].get("multiprocessors") or "N/A",
            "asic_serial": devices[h.index].get("serial") or "N/A",  # amdsmi's spelling of "not given"
        }
    )
    api("amdsmi_get_gpu_driver_info")(
        lambda h: {"driver_name": "amdgpu", "driver_version": driver, "driver_date": "N/A"}
    )
    api("amdsmi_get_gpu_enumeration_info")(lambda h: {"hip_id": h.index})
    api("amdsmi_get_gpu_device_uuid")(lambda h: devices[h.index].get("uuid") or f"uuid-{h.index}")
    api("amdsmi_get_gpu_device_bdf")(lambda h: devices[h.index].get("pci_bus_id") or f"0000:{h.index + 0x0C:02x}:00.0")

    @api("amdsmi_get_gpu_vbios_info")
    def _vbios(h):
        vbios = devices[h.index].get("vbios")
        if vbios is None:
            raise AmdSmiLibraryException(2)  # AMDSMI_STATUS_NOT_SUPPORTED
        # amdsmi_interface.py's keys (the C struct's amdsmi_vbios_info_t fields)
        return {"name": "N/A", "build_date": "N/A", "part_number": "N/A", "version": vbios}

    @api("amdsmi_get_gpu_vram_usage")
    def _vram(h):
        current[h.index] = next(streams[h.index])
        mib = 1024 * 1024
        return {
            "vram_total": devices[h.index]["memory_total_bytes"] // mib,
            "vram_used": current[h.index].get("memory_used_bytes", 0) // mib,
        }

    api("amdsmi_get_gpu_activity")(
        lambda h: {
            "gfx_activity": current[h.index].get("utilization_pct", "N/A"),
            "umc_activity": current[h.index].get("memory_utilization_pct", "N/A"),
            "mm_activity": "N/A",
        }
    )
    api("amdsmi_get_power_info")(
        lambda h: {
            "current_socket_power": current[h.index].get("power_w", "N/A"),
            "average_socket_power": "N/A",
            "power_limit": 750,
        }
    )
    api("amdsmi_get_clock_info")(
        lambda h, kind: {
            "clk": current[h.index].get("sm_clock_mhz" if kind == "GFX" else "memory_clock_mhz", "N/A"),
            "max_clk": devices[h.index].get("max_clock_mhz") or 2100,
            "min_clk": 500,
        }
    )
    api("amdsmi_get_temp_metric")(lambda h, kind, metric: current[h.index].get("temperature_c", 50))

    @api("amdsmi_get_gpu_fan_speed")
    def _fan(h, sensor):
        pct = current[h.index].get("fan_speed_pct")
        if pct is None:  # a passively cooled board
            raise AmdSmiLibraryException(2)
        return round(pct * 255 / 100)

    api("amdsmi_get_gpu_fan_speed_max")(lambda h, sensor: 255)
    api("amdsmi_get_gpu_total_ecc_count")(
        lambda h: {
            "correctable_count": 0,
            "uncorrectable_count": current[h.index].get("ecc_errors_uncorrected", 0),
            "deferred_count": 0,
        }
    )

    def process_info(h, proc: dict) -> dict:
        busy_s = (clock() - started) * (proc.get("utilization_pct") or 0) / 100
        return {
            "name": proc.get("name") or "N/A",
            "pid": proc["pid"],
            "mem": proc.get("memory_used_bytes") or 0,
            "engine_usage": {"gfx": int(busy_s * 1e9), "enc": 0},
            "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": proc.get("memory_used_bytes") or 0},
            "cu_occupancy": "N/A",
        }

    @api("amdsmi_get_gpu_process_list")
    def _process_list(h):
        procs = current[h.index].get("processes") or []
        if process_api == "handles":
            return [types.SimpleNamespace(index=h.index, pid=p["pid"]) for p in procs]
        return [process_info(h, p) for p in procs]

    if process_api == "handles":

        @api("amdsmi_get_gpu_process_info")
        def _process_info(h, process):
            for proc in current[h.index].get("processes") or []:
                if proc["pid"] == process.pid:
                    return process_info(h, proc)
            raise AmdSmiLibraryException(31, "AMDSMI_STATUS_NOT_FOUND")

    _amd_health_api(api, smi, devices)
    return smi


# A healthy MI300X's health counters, as the fake amdsmi answers them unless a device's "health" says otherwise;
# "NOT_SUPPORTED" in place of a value makes the call raise AMDSMI_STATUS_NOT_SUPPORTED.
HEALTHY_AMDSMI = {
    "ecc_blocks": {"UMC": (0, 0), "GFX": (0, 0), "SDMA": (0, 0)},  # block -> (correctable, uncorrectable)
    "bad_pages": 0,
    "violations": {"active_ppt_pwr": False, "active_socket_thrm": False, "active_hbm_thrm": False, "acc_ppt_pwr": 5},
    "pcie": {"width": 16, "max_width": 16, "speed": 32000, "max_speed": 32000},
    "xgmi": ["U"] * 7,
    "partition": ("SPX", "NPS1"),
    "energy": 1_000_000,  # accumulator steps of 15.3 uJ
}


def _amd_health_api(api, smi, devices):
    health = [{**HEALTHY_AMDSMI, **(d.get("health") or {})} for d in devices]
    smi.AmdSmiGpuBlock = types.SimpleNamespace(
        **{name: name for name in ("UMC", "SDMA", "GFX", "MMHUB", "PCIE_BIF", "HDP", "XGMI_WAFL")}
    )

    def value(h, name):
        found = health[h.index][name]
        if found == "NOT_SUPPORTED":
            raise AmdSmiLibraryException(2)
        return found

    @api("amdsmi_get_gpu_ecc_count")
    def _ecc(h, block):
        counts = value(h, "ecc_blocks")
        if block not in counts:
            raise AmdSmiLibraryException(2)
        corrected, uncorrected = counts[block]
        return {"correctable_count": corrected, "uncorrectable_count": uncorrected, "deferred_count": 0}

    api("amdsmi_get_gpu_bad_page_info")(lambda h: [{"page_address": i} for i in range(value(h, "bad_pages"))])
    api("amdsmi_get_violation_status")(lambda h: dict(value(h, "violations")))

    @api("amdsmi_get_pcie_info")
    def _pcie(h):
        link = value(h, "pcie")
        return {
            "pcie_static": {"max_pcie_width": link["max_width"], "max_pcie_speed": link["max_speed"]},
            "pcie_metric": {"pcie_width": link["width"], "pcie_speed": link["speed"], "pcie_replay_count": 0},
        }

    api("amdsmi_get_gpu_xgmi_link_status")(lambda h: {"status": list(value(h, "xgmi")), "total_links": 7})
    api("amdsmi_get_gpu_compute_partition")(lambda h: value(h, "partition")[0])
    api("amdsmi_get_gpu_memory_partition")(lambda h: value(h, "partition")[1])
    api("amdsmi_get_energy_count")(
        lambda h: {"energy_accumulator": value(h, "energy"), "counter_resolution": 15.3, "timestamp": 1}
    )
