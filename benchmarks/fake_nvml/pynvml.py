"""A stand-in `pynvml` for the speed benchmarks: gpudash, nvitop and gpustat all import it and read the same
faked NVIDIA machine, built from a snapshot by tests/fakes.py (make_fake_pynvml).

Put this folder first on PYTHONPATH; GPUDASH_FAKE_SNAPSHOT names the snapshot (a path, or a file name in
examples/snapshots; default dgx-h100-8gpu.json). The real nvidia-ml-py must be installed: its constants,
exception classes and ctypes structures are used as they are.

On top of what gpudash calls, nvitop 1.7 asks the binding for a few C symbols of its own through
`_nvmlGetFunctionPointer` (memory v2, temperature v1, driver model, field values), calls
nvmlDeviceGetIndex, nvmlDeviceGetPowerManagementLimit and nvmlDeviceGetBAR1MemoryInfo, and imports every name of the real module. Those
are answered here from the same data (memory, temperature, the enforced limit) or with NotSupported, which is
what a Linux driver answers for the driver model; every other NVML function of the real binding that the fake
lacks raises NotSupported too. Nothing here is faster for one tool than for another: each reads one fake.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
import types
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parent.parent


def _real_binding() -> types.ModuleType:
    """nvidia-ml-py itself, imported past this folder on sys.path."""
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != _HERE]
    sys.modules.pop("pynvml", None)
    try:
        return importlib.import_module("pynvml")
    finally:
        sys.path[:] = saved


def _build() -> types.ModuleType:
    real = _real_binding()
    sys.path.insert(0, str(_REPO / "tests"))
    try:
        from fakes import load_example, make_fake_pynvml  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(_REPO / "tests"))
    import json

    wanted = os.environ.get("GPUDASH_FAKE_SNAPSHOT", "dgx-h100-8gpu.json")
    devices = json.loads(Path(wanted).read_text())["devices"] if os.sep in wanted else load_example(wanted)["devices"]
    fake = make_fake_pynvml(devices)

    def not_supported(name: str):
        def call(*args, **kwargs):
            raise real.NVMLError_NotSupported()

        call.__name__ = name
        return call

    helpers = {"nvmlExceptionClass", "nvmlStructToFriendlyObject", "nvmlFriendlyObjectToStruct"}
    for name, value in vars(real).items():
        if name.startswith("__") or hasattr(fake, name):
            continue
        if name.startswith("nvml") and isinstance(value, types.FunctionType) and name not in helpers:
            setattr(fake, name, not_supported(name))
        else:
            setattr(fake, name, value)
    fake.nvmlInitWithFlags = lambda flags=0: None
    fake.nvmlDeviceGetIndex = lambda handle: handle.index
    fake.nvmlDeviceGetPowerManagementLimit = fake.nvmlDeviceGetEnforcedPowerLimit
    # nvitop 1.7.2 fails on a MIG device whose BAR1 size is NotSupported (a KeyError formatting it): a
    # 256 MiB aperture, nothing used, is enough for it to draw the row. gpudash never asks.
    bar1 = types.SimpleNamespace(bar1Total=256 * 2**20, bar1Free=256 * 2**20, bar1Used=0)
    fake.nvmlDeviceGetBAR1MemoryInfo = lambda handle: bar1

    # C symbols nvitop calls directly, answered from the same fake readings.
    def memory_v2(handle, memory_ref):
        info = fake.nvmlDeviceGetMemoryInfo(handle)
        memory = memory_ref._obj
        memory.total, memory.free, memory.used = info.total, info.free, info.used
        if hasattr(memory, "reserved"):
            memory.reserved = 0
        return real.NVML_SUCCESS

    def temperature_v1(handle, temperature_ref):
        temperature_ref._obj.temperature = fake.nvmlDeviceGetTemperature(handle, temperature_ref._obj.sensorType)
        return real.NVML_SUCCESS

    def unsupported_symbol(*args):
        return real.NVML_ERROR_NOT_SUPPORTED

    extra = {
        "nvmlDeviceGetMemoryInfo_v2": memory_v2,
        "nvmlDeviceGetTemperatureV": temperature_v1,
        "nvmlDeviceGetDriverModel_v2": unsupported_symbol,
        "nvmlDeviceGetFieldValues": unsupported_symbol,
    }
    lookup = fake._nvmlGetFunctionPointer

    def function_pointer(name: str):
        return extra[name] if name in extra else lookup(name)

    fake._nvmlGetFunctionPointer = function_pointer
    fake.__file__ = __file__
    return fake


sys.modules[__name__] = _build()
_ = ctypes  # ctypes structures are filled above through byref()._obj
