"""What every ROCm check settles before it looks at anything: is this device one it can judge?

Each gate returns what the check needs (the gfx target; torch and the device string) or the result that ends
the check, saying why. The two base classes run their gate in `run`, so a check only writes its own part.
"""

from __future__ import annotations

from typing import Any

from gpudash.plugins_api import NOT_RUN_REPLAYED, Check, CheckResult, Device

from . import facts


def _not_amd(check: Check, device: Device) -> CheckResult:
    # gpudash already skips other vendors (vendors = ("amd",)); this answers a direct call.
    return check.skipped(f"not an AMD GPU ({device.vendor}): this is a ROCm check")


def amd_target(check: Check, device: Device) -> str | CheckResult:
    """The device's gfx target, or the skip/warn result when there is none to look up."""
    if device.vendor != "amd":
        return _not_amd(check, device)
    gfx = facts.parse_gfx(device.gfx_target)
    if gfx is None:
        return check.warned(
            f"the gfx target of {device.name} is unknown, so the ROCm tables cannot be consulted",
            remediation="Run with torch installed (it reports gcnArchName) or amdsmi available.",
        )
    return gfx


def rocm_torch(check: Check, device: Device) -> tuple[Any, str] | CheckResult:
    """(torch, "cuda:N") when this check can run on the device; otherwise the skip result saying why."""
    if device.vendor != "amd":
        return _not_amd(check, device)
    if device.replayed:
        return check.skipped(NOT_RUN_REPLAYED)
    import torch

    if not getattr(torch.version, "hip", None):
        return check.skipped(f"torch {torch.__version__} here is not a ROCm build: it cannot run on {device.key}")
    if device.torch_device is None or not torch.cuda.is_available():
        return check.skipped(f"torch does not see {device.key} ({device.name})")
    return torch, device.torch_device


class RocmTableCheck(Check):
    """A check answered from the gfx target and ROCm version, so it also runs on replayed machines."""

    needs_device = False
    vendors = ("amd",)

    def run(self, device: Device) -> CheckResult:
        gfx = amd_target(self, device)
        return gfx if isinstance(gfx, CheckResult) else self.run_on_target(device, gfx)

    def run_on_target(self, device: Device, gfx: str) -> CheckResult:
        raise NotImplementedError(f"{type(self).__name__}.run_on_target")


class RocmDeviceCheck(Check):
    """A check that runs an experiment on a live ROCm device through torch."""

    vendors = ("amd",)
    timeout_s = 120

    def run(self, device: Device) -> CheckResult:
        ready = rocm_torch(self, device)
        return ready if isinstance(ready, CheckResult) else self.run_on_torch(*ready, device)

    def run_on_torch(self, torch: Any, where: str, device: Device) -> CheckResult:
        raise NotImplementedError(f"{type(self).__name__}.run_on_torch")
