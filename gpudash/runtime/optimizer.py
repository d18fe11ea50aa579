"""RuntimeOptimizer: the run-time helpers for one device in one object, as the enhancement summary uses them.

opt = get_enhanced_optimizer()                 # one per process (and device, replay)
opt.platform, opt.device                       # "AMD ROCm/HIP", "cuda:0"
opt.get_optimal_device("fft")                  # "cpu" where the rules route FFTs to the CPU
opt.optimize_batch_size(16)
with opt.memory_management("training"):
    out = opt.profiler.profile_operation("forward_pass", model, batch)
opt.get_performance_stats()
"""

from __future__ import annotations

import threading
from typing import Any

from gpudash.runtime import batch, memory, platform, routing
from gpudash.runtime.profiling import Profiler, profiler
from gpudash.runtime.target import Target, cached


class RuntimeOptimizer:
    def __init__(
        self, device: Any = None, *, replay: str | None = None, checks: Any = None, profiler_: Profiler | None = None
    ) -> None:
        self.target: Target = cached(device, replay=replay, checks=checks)
        self._device, self._replay = device, replay
        self.profiler = profiler_ or profiler

    @property
    def platform(self) -> str:
        return platform.platform_name(self.target)

    @property
    def device(self) -> str | None:
        """The torch device the training runs on ("cuda:0", "cpu")."""
        return self.target.torch_device

    def get_optimal_device(self, operation_type: str = "default") -> str:
        return routing.device_for(self.target, operation_type)[0]

    def routing(self) -> dict[str, tuple[str, str]]:
        """operation -> (device, why) for what is routed away from the device."""
        return routing.routes(self.target)

    def optimize_tensor_for_operation(self, tensor: Any, operation_type: str) -> Any:
        return tensor.to(self.get_optimal_device(operation_type))

    def optimize_batch_size(self, base_batch_size: int, **kwargs: Any) -> int:
        return batch.optimize_batch_size(base_batch_size, self._device, replay=self._replay, **kwargs)

    def memory_management(self, operation_name: str = "block", **kwargs: Any):
        where = self.device if self.device and not self.target.replayed else None
        return memory.memory_management(operation_name, where, **kwargs)

    def recommended_env(self) -> dict[str, tuple[str, str]]:
        return platform.recommended_env(self.target)

    def notes(self) -> list[str]:
        return platform.notes(self.target)

    def get_performance_stats(self) -> dict[str, Any]:
        return self.profiler.stats(platform.platform_info(self._device, replay=self._replay))


_optimizers: dict[tuple[str, str | None], RuntimeOptimizer] = {}
_lock = threading.Lock()


def get_enhanced_optimizer(device: Any = None, *, replay: str | None = None) -> RuntimeOptimizer:
    """The process's RuntimeOptimizer for `device` (default: the first GPU, else the CPU)."""
    from gpudash.devices import replay_path

    key = (repr(device), replay_path(replay))
    with _lock:
        if key not in _optimizers:
            _optimizers[key] = RuntimeOptimizer(device, replay=replay)
        return _optimizers[key]
