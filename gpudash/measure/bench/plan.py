"""What a benchmark mode measures: the matmul shapes, the timing per shape, the size of the memory copy."""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.models import DeviceInfo

MODES = ("quick", "full")


@dataclass(frozen=True)
class Plan:
    """What one mode measures on one kind of device."""

    shapes: tuple[tuple[int, int, int], ...]  # (M, N, K)
    measure_s: float  # timing per shape, after warm-up
    copy_bytes: int
    sweep_budget_s: float | None = None  # no new shape starts after this long on one precision (quick mode)


def _squares(*sizes: int) -> tuple[tuple[int, int, int], ...]:
    return tuple((n, n, n) for n in sizes)


# The CPU quick sweep is tuned on 2-core VMs against benchmarks/mamf_reference.py (see docs/performance.md):
# on AVX-512 without AMX (Zen 4) fp32 peaks at small squares that stay in cache, bf16 is flat from 512 up, and
# int8 (VNNI) keeps rising with M at N = K = 2048, so a sweep that stopped at small shapes would understate it
# and misstate its speedup over fp32; with AMX (a Sapphire Rapids-class guest) bf16 peaks at M = 3328-3840 with
# N = K = 1024 and int8 at 1536 squares, hence those two shapes.
_CPU_QUICK = Plan(
    _squares(256, 512, 1024, 1536, 2048) + ((3584, 1024, 1024), (3072, 2048, 2048)),
    measure_s=0.2,
    copy_bytes=256 << 20,
    sweep_budget_s=3.5,
)
_CPU_FULL = Plan(
    _squares(256, 512, 768, 1024, 1536, 2048, 3072)
    + tuple((m, 2048, 2048) for m in (512, 1024, 1536, 2560, 3072, 3584, 4096))
    + tuple((m, 1024, 1024) for m in (2048, 3072, 4096)),
    measure_s=1.0,
    copy_bytes=1 << 30,
)
# GPUs need large shapes to fill them (mamf-finder's quick run: M up to 20480 at N = K = 4096).
_GPU_QUICK = Plan(
    _squares(1024, 2048, 4096, 8192) + ((8192, 4096, 4096), (16384, 8192, 8192)),
    measure_s=0.2,
    copy_bytes=1 << 30,
    sweep_budget_s=15.0,
)
_GPU_FULL = Plan(
    _squares(1024, 2048, 4096, 8192, 16384)
    + tuple((m, 4096, 4096) for m in range(1024, 20481, 1024))
    + tuple((m, 8192, 8192) for m in range(2048, 16385, 2048)),
    measure_s=1.0,
    copy_bytes=2 << 30,
)


def plan_for(device: DeviceInfo, mode: str) -> Plan:
    if mode not in MODES:
        raise ValueError(f"unknown bench mode {mode!r} (choose from {', '.join(MODES)})")
    cpu = device.vendor == "cpu"
    return {
        ("quick", True): _CPU_QUICK,
        ("full", True): _CPU_FULL,
        ("quick", False): _GPU_QUICK,
        ("full", False): _GPU_FULL,
    }[(mode, cpu)]
