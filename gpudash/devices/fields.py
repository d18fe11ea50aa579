"""Reading one driver field at a time, so one failure costs one field and not the device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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


def process_name(pid: int) -> str | None:
    """The name of a live process (NVML gives only pids); None when it is gone or hidden from us.
    Inside a container NVML reports host pids, which psutil cannot see: those stay nameless."""
    import psutil

    try:
        return psutil.Process(pid).name()
    except (psutil.Error, ValueError):
        return None
