"""MIG on an NVIDIA GPU: the mode, and each MIG device with its memory and processes.

nvmlDeviceGetMigMode gives (current, pending); with MIG enabled, nvmlDeviceGetMaxMigDeviceCount bounds
the MIG device indices and nvmlDeviceGetMigDeviceHandleByIndex answers NotFound for an empty slot
(NVML API reference, Multi Instance GPU Management:
https://docs.nvidia.com/deploy/nvml-api/group__nvmlMultiInstanceGPU.html).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudash.devices.fields import error_reason, read_field, text
from gpudash.devices.nvml_processes import NvmlProcesses
from gpudash.models import MigInstance

_MODES = {0: "disabled", 1: "enabled"}  # NVML_DEVICE_MIG_DISABLE / NVML_DEVICE_MIG_ENABLE


def mig_state(
    nv: Any,
    handle: Any,
    key: str,
    missing: dict[str, str],
    processes: NvmlProcesses,
    memory: Callable[[Any, dict[str, str]], Any],
) -> tuple[str | None, str | None, list[MigInstance] | None]:
    """(mode, pending mode, instances); instances is None unless MIG is enabled."""
    modes = read_field(missing, "mig_mode", lambda: nv.nvmlDeviceGetMigMode(handle))
    if modes is None:
        missing["mig_mode_pending"] = missing["mig_mode"]
        return None, None, None
    current, pending = (_MODES.get(int(m), f"unknown ({m})") for m in modes)
    if current != "enabled":
        return current, pending, None
    slots = read_field(missing, "mig_instances", lambda: nv.nvmlDeviceGetMaxMigDeviceCount(handle))
    if slots is None:
        return current, pending, None
    instances = []
    for index in range(slots):
        try:
            mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(handle, index)
        except Exception as exc:
            if error_reason(exc) != "NotFound":  # NotFound: nothing is configured in this slot
                missing["mig_instances"] = error_reason(exc)
            continue
        instances.append(_instance(nv, mig, index, f"{key}/mig{index}", processes, memory))
    return current, pending, instances


def _instance(
    nv: Any,
    mig: Any,
    index: int,
    key: str,
    processes: NvmlProcesses,
    memory: Callable[[Any, dict[str, str]], Any],
) -> MigInstance:
    missing: dict[str, str] = {}
    attributes = read_field(missing, "multiprocessors", lambda: nv.nvmlDeviceGetAttributes(mig))
    used = memory(mig, missing)
    return MigInstance(
        index=index,
        gpu_instance_id=read_field(missing, "gpu_instance_id", lambda: nv.nvmlDeviceGetGpuInstanceId(mig)),
        compute_instance_id=read_field(missing, "compute_instance_id", lambda: nv.nvmlDeviceGetComputeInstanceId(mig)),
        name=text(read_field(missing, "name", lambda: nv.nvmlDeviceGetName(mig))),
        uuid=text(read_field(missing, "uuid", lambda: nv.nvmlDeviceGetUUID(mig))),
        multiprocessors=getattr(attributes, "multiprocessorCount", None),
        memory_used_bytes=used.used if used is not None else None,
        memory_total_bytes=used.total if used is not None else None,
        processes=processes.read(mig, key, missing),
        unavailable=missing,
    )
