"""The adaptive matmul benchmark: the dispatcher's kernel against plain torch.matmul in fp32, on one device.

Both are timed on the same operands (the adaptive time includes its casts, as a caller pays them), and the
adaptive result is compared with the fp32 one: the speedup and the numerical error are reported together,
because a faster kernel that changes the answer too much is no gain.
"""

from __future__ import annotations

import statistics
import time

from gpudash.plugins_api import Benchmark, BenchResult, Device

from .dispatch import default_dispatcher

CPU_SIZE, GPU_SIZE = 1024, 4096


def median_time(fn, budget_s: float, sync=lambda: None, min_reps: int = 3, max_reps: int = 50) -> float:
    fn()  # warm-up: first-call allocations and kernel selection
    sync()
    times: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() < deadline):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class AdaptiveMatmulBenchmark(Benchmark):
    name = "adaptive_matmul"
    description = "adaptive matmul vs torch.matmul fp32: speedup and error against the fp32 result"

    def __init__(self, size: int | None = None) -> None:
        self.size = size

    def run(self, device: Device, budget_s: float) -> list[BenchResult]:
        import torch

        where = device.torch_device
        if where is None:
            raise RuntimeError(f"torch does not see {device.key}; nothing to run on")
        n = self.size or (CPU_SIZE if device.vendor == "cpu" else GPU_SIZE)
        sync = torch.cuda.synchronize if where.startswith("cuda") else (lambda: None)
        gen = torch.Generator(device="cpu").manual_seed(0)
        x = torch.randn(n, n, generator=gen).to(where)
        w = torch.randn(n, n, generator=gen).to(where)
        dispatcher = default_dispatcher()
        kernel = dispatcher.choose(device, tuple(x.shape), tuple(w.shape))

        with torch.no_grad():
            base_s = median_time(lambda: torch.matmul(x, w.t()), budget_s / 2, sync)
            adaptive_s = median_time(lambda: dispatcher.matmul(x, w, device=device), budget_s / 2, sync)
            reference = torch.matmul(x, w.t())
            result, used = dispatcher.matmul_with_info(x, w, device=device)
            diff = result.float() - reference
            rel_error = (diff.norm() / reference.norm()).item()
            max_abs = diff.abs().max().item()
        flops = 2.0 * n * n * n
        shape = [n, n, n]
        return [
            BenchResult(
                "fp32",
                "torch.matmul",
                shape,
                flops / base_s / 1e9,
                base_s,
                details={"role": "baseline for adaptive_matmul"},
            ),
            BenchResult(
                _precision_of(dispatcher, used, kernel),
                "adaptive_matmul",
                shape,
                flops / adaptive_s / 1e9,
                adaptive_s,
                details={
                    "kernel": used,
                    "speedup_vs_torch_matmul": base_s / adaptive_s,
                    "rel_error_vs_fp32": rel_error,
                    "max_abs_error_vs_fp32": max_abs,
                    "note": f"{used}: {base_s / adaptive_s:.2f}x torch.matmul fp32, "
                    f"relative error {rel_error:.1e} against its result",
                },
            ),
        ]


def _precision_of(dispatcher, name: str, fallback) -> str:
    return next((k.precision for k in dispatcher.kernels if k.name == name), fallback.precision)
