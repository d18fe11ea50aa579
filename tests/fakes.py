"""Fake vendor bindings driven by snapshot data, so the real adapter code runs without a GPU.

Each fake is a whole module object put into sys.modules (monkeypatch.setitem), the way gpustat fakes
NVML. Errors are injected per (device index, function name); index None means every device.
"""

from __future__ import annotations

import itertools
import json
import types
from collections import namedtuple
from pathlib import Path

import pynvml as real_pynvml  # only for its exception classes and constants

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "snapshots"

Memory = namedtuple("Memory", "total free used")
Utilization = namedtuple("Utilization", "gpu memory")
Pci = namedtuple("Pci", "busId")
Process = namedtuple("Process", "pid usedGpuMemory")


def load_example(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def _raiser(errors, index, func):
    exc = errors.get((index, func)) or errors.get((None, func))
    if exc is not None:
        raise exc


def make_fake_pynvml(
    devices: list[dict],
    *,
    driver="550.54.15",
    cuda=12040,
    errors=None,
    init_error: Exception | None = None,
    memory_v2: bool = True,
) -> types.ModuleType:
    errors = errors or {}
    nv = types.ModuleType("pynvml")
    for name in dir(real_pynvml):
        if name.startswith(("NVMLError", "NVML_")) or name == "nvmlMemory_v2":
            setattr(nv, name, getattr(real_pynvml, name))
    streams = [itertools.cycle(d.get("samples") or [{}]) for d in devices]
    current = [dict(d.get("samples", [{}])[0]) if d.get("samples") else {} for d in devices]
    calls: list[str] = []
    nv.calls = calls

    def handle_of(h):
        return h.index

    def api(func_name):
        def wrap(fn):
            def inner(*args, **kwargs):
                calls.append(func_name)
                index = handle_of(args[0]) if args and isinstance(args[0], types.SimpleNamespace) else None
                _raiser(errors, index, func_name)
                return fn(*args, **kwargs)

            setattr(nv, func_name, inner)
            return inner

        return wrap

    @api("nvmlInit")
    def _init():
        if init_error is not None:
            raise init_error

    api("nvmlShutdown")(lambda: None)
    api("nvmlSystemGetDriverVersion")(lambda: driver)
    api("nvmlSystemGetCudaDriverVersion")(lambda: cuda)
    api("nvmlDeviceGetCount")(lambda: len(devices))

    @api("nvmlDeviceGetHandleByIndex")
    def _handle(i):
        _raiser(errors, i, "handle")
        current[i] = next(streams[i])
        return types.SimpleNamespace(index=i)

    api("nvmlDeviceGetName")(lambda h: devices[h.index]["name"])
    api("nvmlDeviceGetUUID")(lambda h: devices[h.index].get("uuid") or f"GPU-0000-{h.index}")
    api("nvmlDeviceGetPciInfo")(
        lambda h: Pci(devices[h.index].get("pci_bus_id") or f"00000000:{h.index + 0x17:02X}:00.0")
    )
    api("nvmlDeviceGetCudaComputeCapability")(
        lambda h: tuple(int(x) for x in devices[h.index]["compute_capability"].split("."))
    )
    api("nvmlDeviceGetMaxClockInfo")(lambda h, kind: devices[h.index].get("max_clock_mhz") or 1980)

    def _advance(h):
        current[h.index] = next(streams[h.index])
        return current[h.index]

    @api("nvmlDeviceGetMemoryInfo")
    def _memory(h, version=None):
        if version is not None and not memory_v2:
            raise real_pynvml.NVMLError_FunctionNotFound()
        s = _advance(h)
        total = devices[h.index]["memory_total_bytes"]
        used = s.get("memory_used_bytes", 0)
        return Memory(total=total, free=total - used, used=used)

    api("nvmlDeviceGetUtilizationRates")(
        lambda h: Utilization(
            current[h.index].get("utilization_pct", 0), current[h.index].get("memory_utilization_pct", 0)
        )
    )
    api("nvmlDeviceGetTemperature")(lambda h, sensor: current[h.index].get("temperature_c", 40))
    api("nvmlDeviceGetPowerUsage")(lambda h: int(current[h.index].get("power_w", 100) * 1000))
    api("nvmlDeviceGetEnforcedPowerLimit")(lambda h: int(devices[h.index].get("power_limit_w", 700) * 1000))
    api("nvmlDeviceGetClockInfo")(
        lambda h, kind: current[h.index].get(
            "sm_clock_mhz" if kind == real_pynvml.NVML_CLOCK_SM else "memory_clock_mhz", 1000
        )
    )
    api("nvmlDeviceGetComputeRunningProcesses")(
        lambda h: [Process(p["pid"], p.get("memory_used_bytes")) for p in current[h.index].get("processes") or []]
    )
    return nv


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, code: int, name: str = "AMDSMI_STATUS_NOT_SUPPORTED"):
        super().__init__(f"Error code: {code} | {name}")
        self.err_code = code


def make_fake_amdsmi(
    devices: list[dict], *, errors=None, init_error: Exception | None = None, driver="6.8.5"
) -> types.ModuleType:
    errors = errors or {}
    smi = types.ModuleType("amdsmi")
    smi.AmdSmiException = AmdSmiException
    smi.AmdSmiLibraryException = AmdSmiLibraryException
    smi.AmdSmiClkType = types.SimpleNamespace(GFX="GFX", MEM="MEM")
    smi.AmdSmiTemperatureType = types.SimpleNamespace(EDGE="EDGE", HOTSPOT="HOTSPOT", JUNCTION="JUNCTION")
    smi.AmdSmiTemperatureMetric = types.SimpleNamespace(CURRENT="CURRENT")
    streams = [itertools.cycle(d.get("samples") or [{}]) for d in devices]
    current = [{} for _ in devices]

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
        }
    )
    api("amdsmi_get_gpu_driver_info")(
        lambda h: {"driver_name": "amdgpu", "driver_version": driver, "driver_date": "N/A"}
    )
    api("amdsmi_get_gpu_enumeration_info")(lambda h: {"hip_id": h.index})
    api("amdsmi_get_gpu_device_uuid")(lambda h: devices[h.index].get("uuid") or f"uuid-{h.index}")
    api("amdsmi_get_gpu_device_bdf")(lambda h: devices[h.index].get("pci_bus_id") or f"0000:{h.index + 0x0C:02x}:00.0")

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
    api("amdsmi_get_gpu_process_list")(lambda h: [])
    return smi
