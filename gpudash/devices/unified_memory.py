"""Unified-memory GPUs (GB10 in DGX Spark): the GPU has no memory of its own, NVML answers NotSupported for
its memory info, and its memory is the host's. nvitop shows the host's memory there; so does gpudash, labelled
as such (Sample.memory_source), never as if the GPU had that memory to itself."""

from __future__ import annotations

from types import SimpleNamespace

UNIFIED = "unified (host memory)"


def host_memory() -> SimpleNamespace | None:
    """The host's memory as NVML's memory info gives it (total, used, free), or None where psutil cannot say.
    Used is total less available, as `free` and nvitop count it."""
    try:
        import psutil

        vm = psutil.virtual_memory()
    except Exception:
        return None
    return SimpleNamespace(total=int(vm.total), used=int(vm.total - vm.available), free=int(vm.available))
