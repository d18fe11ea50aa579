"""Which devices need the bf16 workarounds: AMD GPUs whose architecture carries a bf16 caution in gpudash's tables.

The ROCm compatibility guide reports bf16 -> fp32 conversions giving zeros and bf16 caches turning to zeros or
Inf on gfx1151/gfx1150 (RDNA3.5, "partial" bf16) and disables bf16 on RDNA3; gpudash's architecture tables
(gpudash.knowledge) carry a bf16 caution for exactly those families, with the issues behind it. Everywhere
else (NVIDIA, the CPU, CDNA, RDNA4, ...) the workarounds do nothing. The answer for a live torch device is
looked up once per process; a caller that knows better (a passing `bf16_to_fp32` check, say) passes
via_cpu=False to the functions, or via_cpu=True to force the workaround.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_cache: dict[str, bool] = {}
_lock = threading.Lock()


def _from_facts(device: Any) -> bool:
    """For anything with vendor/gfx_target/name (gpudash's DeviceInfo, a plugin Device): spec tables only."""
    from gpudash.knowledge import arch_for

    return getattr(device, "vendor", None) == "amd" and "bf16" in arch_for(device).cautions


def _torch_device_key(device: Any) -> str:
    text = str(getattr(device, "device", device))  # a tensor's device, or the device itself
    if text == "cuda":
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return f"cuda:{torch.cuda.current_device()}"
    return text


def _live(key: str) -> bool:
    if not key.startswith("cuda"):
        return False  # the CPU, meta, MPS, XPU: none has the ROCm conversion bugs
    import torch

    if not getattr(torch.version, "hip", None):
        return False  # CUDA on NVIDIA
    from gpudash.plugins_api import local_device

    return _from_facts(local_device(key))


def needs_bf16_workarounds(device: Any = "cpu") -> bool:
    """True for a device the guide's bf16 bugs concern. `device`: a torch device ("cuda:0", torch.device, a
    tensor's device, a tensor) or a gpudash device record (DeviceInfo/Device: replayed machines too)."""
    if hasattr(device, "vendor"):
        return _from_facts(device)
    key = _torch_device_key(device)
    found = _cache.get(key)
    if found is None:
        found = _live(key)
        with _lock:
            _cache[key] = found
    return found


def decide(device: Any, via_cpu: bool | None) -> bool:
    """The caller's explicit choice, else whether the device needs the workaround (cheap after the first call)."""
    if via_cpu is not None:
        return via_cpu
    key = str(getattr(device, "device", device))
    if key == "cpu":
        return False  # the common case, answered without a lookup
    return needs_bf16_workarounds(device)
