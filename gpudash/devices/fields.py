"""Reading one driver field at a time, so one failure costs one field and not the device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudash.plain_text import one_line


def error_reason(exc: BaseException) -> str:
    """A short reason for the UI: 'NotSupported' from NVMLError_NotSupported, else the message."""
    name = type(exc).__name__
    if name.startswith("NVMLError_"):  # the class name is the clearest word NVML has: NotSupported, GpuIsLost
        return name[len("NVMLError_") :]
    text = str(exc).strip()
    return text.splitlines()[0] if text else name


def read_field(unavailable: dict[str, str], name: str, call: Callable[[], Any]) -> Any:
    """Call a driver getter; on any error record why under `name` and return None."""
    try:
        return call()
    except Exception as exc:  # drivers raise their own types; any of them means n/a
        unavailable[name] = error_reason(exc)
        return None


def version_text(call: Callable[[], Any], limit: int = 64) -> str | None:
    """A version string a driver may not have (a VBIOS version: NotSupported in VMs, absent from older bindings):
    one line of at most `limit` characters, or None on any error or an empty or "N/A" answer. No reason is kept:
    a part that has none is not at fault, and every view would otherwise say so for every GPU."""
    try:
        value = text(call())
    except Exception:  # NotSupported, FunctionNotFound, an older binding without the call: simply not known
        return None
    if not isinstance(value, str):
        return None
    value = one_line(value, limit).strip()
    return value if value and value.upper() != "N/A" else None


def text(value: Any) -> Any:
    """Strings as str: nvidia-ml-py before 11.450 returns names, UUIDs and versions as bytes."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value


# NVML's own wording for the errors that mean the GPU itself is gone (NVML API reference, nvmlReturn_t:
# https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html).
_LOST_MEANING = {
    "GpuIsLost": "the GPU has fallen off the bus or has otherwise become inaccessible",
    "ResetRequired": "the GPU requires a reset before it can be used again",
    "OperatingSystem": "the GPU control device has been blocked by the operating system/cgroups",
    "InsufficientPower": "the GPU's external power cables are not properly attached",
    "IrqIssue": "the NVIDIA kernel driver detected an interrupt issue with the GPU",
    "NoPermission": "the current user does not have permission for this GPU",
    "Unknown": "an internal driver error occurred",
}


def is_lost(reason: str | None) -> bool:
    """Whether a field's reason means the whole GPU is gone, not just that field."""
    return reason == "GpuIsLost"


def lost_reason(reason: str) -> str:
    """'GpuIsLost: the GPU has fallen off the bus ...' for the status line; other reasons as they are."""
    meaning = _LOST_MEANING.get(reason)
    return f"{reason}: {meaning}" if meaning else reason
