"""The matmul dispatcher: a registry of (predicate, implementation) kernels, tried highest priority first.

`matmul(x, w)` computes x @ w.T (nn.Linear's layout: x is (..., K), w is (N, K)) with the best kernel the
device's architecture supports and gpudash's decision allows, and returns the result in x's dtype. The device
facts come from the tensor's torch device (or are given, as the benchmark does for the device gpudash asks
about). The decision is gpudash.amp.kernel_precision, asked once per device: a bf16 or fp16 kernel (built-in or
a plugin's) runs only where it is the AMP dtype AmpConfig.auto() and `gpudash export` give for that device, an
fp8 kernel only where the fp8 decision allows it; fp32 kernels always may. A kernel that raises at run time (an
old ROCm without OCP fp8, a torch without _scaled_mm) is remembered as broken for that device, a RuntimeWarning
says so once, and the next kernel runs: fp32 always works.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable
from typing import Any

from gpudash.ops import collect_kernels
from gpudash.plugins_api import Arch, Device, Kernel, KernelQuery, arch_of, local_device

from .kernels import BUILTIN_KERNELS


class Dispatcher:
    def __init__(self, kernels: Iterable[Kernel] = BUILTIN_KERNELS, op: str = "matmul") -> None:
        unique: list[Kernel] = []
        for kernel in kernels:
            if kernel.op == op and kernel not in unique:
                unique.append(kernel)
        # Stable sort: among equal priorities, the order given wins (built-ins before plugin kernels).
        self.kernels = sorted(unique, key=lambda k: -k.priority)
        self._broken: set[tuple[str, str]] = set()  # (device key, kernel name) that raised here
        self._devices: dict[str, Device] = {}
        self._arches: dict[tuple, Arch] = {}
        self._decisions: dict[tuple, Any] = {}  # device identity -> gpudash's KernelChoice, asked once
        self._lock = threading.Lock()

    # Choosing -----------------------------------------------------------------------------------

    def query(
        self, device: Device, x_shape, w_shape, dtype: str = "float32", requires_grad: bool = False
    ) -> KernelQuery:
        facts = (device.vendor, device.compute_capability, device.gfx_target, tuple(device.cpu_features))
        with self._lock:
            arch = self._arches.get(facts)
            if arch is None:
                arch = self._arches[facts] = arch_of(device)
        return KernelQuery(device, arch, (tuple(x_shape), tuple(w_shape)), dtype, requires_grad)

    def decision(self, device: Device) -> Any:
        """gpudash's KernelChoice for `device` (precision, fp8, reasons), asked once per device and dispatcher."""
        ident = (
            device.vendor,
            device.index,
            device.name,
            device.compute_capability,
            device.gfx_target,
            tuple(device.cpu_features),
            device.torch_index,
            device.replayed,
            tuple(sorted((k, str(v)) for k, v in device.runtime.items())),
        )
        with self._lock:
            found = self._decisions.get(ident)
        if found is None:
            from gpudash.amp import kernel_precision  # the decision's rules load on first use, not at plugin load

            found = kernel_precision(device)
            with self._lock:
                self._decisions[ident] = found
        return found

    def allowed(self, device: Device, kernel: Kernel) -> bool:
        """May `kernel` run on `device` by gpudash's decision? 16-bit kernels only in the decided precision,
        fp8 kernels only where fp8 is allowed; any other precision is the kernel's own predicate's business."""
        if kernel.precision in ("bf16", "fp16"):
            return bool(kernel.precision == self.decision(device).precision)
        if kernel.precision.startswith("fp8"):
            return bool(self.decision(device).fp8)
        return True

    def candidates(self, query: KernelQuery) -> list[Kernel]:
        out = []
        for kernel in self.kernels:
            if (query.device.key, kernel.name) in self._broken:
                continue
            if not self.allowed(query.device, kernel):
                continue
            try:
                if kernel.predicate(query):
                    out.append(kernel)
            except Exception as exc:  # a third-party predicate bug costs that kernel only
                self._mark_broken(query.device, kernel, f"its predicate raised {type(exc).__name__}: {exc}")
        return out

    def choose(
        self,
        device: Device,
        x_shape=(1024, 1024),
        w_shape=(1024, 1024),
        dtype: str = "float32",
        requires_grad: bool = False,
    ) -> Kernel:
        """The kernel a call with these shapes would use on `device` (no torch needed)."""
        found = self.candidates(self.query(device, x_shape, w_shape, dtype, requires_grad))
        if not found:
            raise LookupError(f"no matmul kernel applies on {device.key}")
        return found[0]

    def explain(self, device: Device, x_shape=(1024, 1024), w_shape=(1024, 1024), requires_grad: bool = False) -> str:
        query = self.query(device, x_shape, w_shape, requires_grad=requires_grad)
        kernel = self.choose(device, x_shape, w_shape, requires_grad=requires_grad)
        ident = (device.compute_capability and f"cc {device.compute_capability}") or device.gfx_target or device.vendor
        decided = self.decision(device)
        why = decided.fp8_reason if kernel.precision.startswith("fp8") else decided.reason
        return f"{kernel.name} on {query.arch.family} ({ident}): {kernel.description}; gpudash decided: {why}"

    # Running ------------------------------------------------------------------------------------

    def device_for(self, tensor: Any) -> Device:
        key = str(tensor.device)
        with self._lock:
            if key not in self._devices:
                self._devices[key] = local_device(tensor.device)
            return self._devices[key]

    def matmul_with_info(self, x: Any, w: Any, device: Device | None = None) -> tuple[Any, str]:
        """x @ w.T with the chosen kernel, and that kernel's name."""
        import torch

        if w.dim() != 2:
            raise ValueError(f"w must be 2-D (N, K), got shape {tuple(w.shape)}")
        if x.dim() < 1 or x.shape[-1] != w.shape[1]:
            raise ValueError(f"x's last dimension must match w's K: x {tuple(x.shape)}, w {tuple(w.shape)}")
        dev = device or self.device_for(x)
        x2 = x.reshape(-1, x.shape[-1])
        grad = torch.is_grad_enabled() and (x.requires_grad or w.requires_grad)
        query = self.query(dev, tuple(x2.shape), tuple(w.shape), str(x.dtype).replace("torch.", ""), grad)
        kernels = self.candidates(query)
        for i, kernel in enumerate(kernels):
            try:
                out = kernel.implementation(x2, w)
            except Exception as exc:
                if i == len(kernels) - 1:
                    raise
                self._mark_broken(dev, kernel, f"it raised {type(exc).__name__}: {exc}")
                continue
            return out.reshape(*x.shape[:-1], w.shape[0]), kernel.name
        raise LookupError(f"no matmul kernel applies on {dev.key}")

    def matmul(self, x: Any, w: Any, device: Device | None = None) -> Any:
        return self.matmul_with_info(x, w, device)[0]

    def _mark_broken(self, device: Device, kernel: Kernel, why: str) -> None:
        with self._lock:
            if (device.key, kernel.name) in self._broken:
                return
            self._broken.add((device.key, kernel.name))
        warnings.warn(
            f"adaptive matmul: kernel {kernel.name} left out on {device.key} because {why}",
            RuntimeWarning,
            stacklevel=3,
        )


_default: Dispatcher | None = None
_default_lock = threading.Lock()


def default_dispatcher() -> Dispatcher:
    """The built-in kernels plus any other plugin's `register_kernels` (GPUDASH_LOAD_PLUGINS applies)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Dispatcher([*BUILTIN_KERNELS, *collect_kernels("matmul")])
        return _default


def matmul(x: Any, w: Any) -> Any:
    """x @ w.T (x: (..., K), w: (N, K)) with the best kernel for x's device; the result has x's dtype."""
    return default_dispatcher().matmul(x, w)


def matmul_with_info(x: Any, w: Any) -> tuple[Any, str]:
    """Like `matmul`, and the name of the kernel that ran ("bf16", "fp8_e4m3fn_scaled_mm", ...)."""
    return default_dispatcher().matmul_with_info(x, w)
