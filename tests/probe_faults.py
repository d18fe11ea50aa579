"""Planted faults for the probe tests: a child-side task target that wraps gpudash's real probe.

The tests point gpudash.measure.probe.TASK_TARGET at `probe_faults:run_probe` (with this folder on
PYTHONPATH) and set GPUDASH_PROBE_FAULT, e.g. "bf16=conversion_zeros,fp32=matmul_nan,fp16=hang". Only this
module reads that variable. Each fault imitates a real failure at the point where the real probe meets the
device, so the real checks have to catch it:
  conversion_zeros  every conversion to float32 on the device returns zeros (the ROCm bf16 class)
  matmul_nan        the device matmul returns NaN everywhere
  hang              the probe never returns
  segfault / abort  the process dies by SIGSEGV / SIGABRT, as a driver crash would
"""

from __future__ import annotations

import os
import signal
import time

FAULT_ENV = "GPUDASH_PROBE_FAULT"


def planned_faults() -> dict[str, str]:
    pairs = (item.split("=", 1) for item in os.environ.get(FAULT_ENV, "").split(",") if "=" in item)
    return {precision.strip(): kind.strip() for precision, kind in pairs}


def _die_or_hang(kind: str) -> None:
    """The process-level faults strike before torch is imported: what matters is how the parent copes,
    and the test then spends no time importing torch into a process that is about to die."""
    if kind == "hang":
        time.sleep(3600)
    elif kind == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == "abort":
        os.abort()


def _plant(kind: str) -> list:
    """Wrong numbers at the point where the real probe meets the device; returns what to restore, since
    the next task runs in the same process."""
    import torch

    from gpudash.measure.probe.tasks import conversion, matmul

    if kind == "conversion_zeros":
        real = conversion.device_convert

        def zeros_to_fp32(x, dtype):
            out = real(x, dtype)
            return torch.zeros_like(out) if dtype == torch.float32 else out

        conversion.device_convert = zeros_to_fp32
        return [(conversion, "device_convert", real)]
    if kind == "matmul_nan":
        real = matmul.device_matmul
        matmul.device_matmul = lambda a, b: torch.full(
            (a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=a.device
        )
        return [(matmul, "device_matmul", real)]
    raise ValueError(f"unknown planted fault {kind!r}")


def run_probe(device, precision, fp8=None, progress=None):
    kind = planned_faults().get(precision)
    restore = []
    if kind in ("hang", "segfault", "abort"):
        _die_or_hang(kind)
    elif kind:
        restore = _plant(kind)
    from gpudash.measure.probe.tasks import entry

    try:
        return entry.run_probe(device, precision, fp8=fp8, progress=progress)
    finally:
        for module, name, value in restore:
            setattr(module, name, value)
