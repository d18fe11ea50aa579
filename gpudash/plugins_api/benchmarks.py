"""Benchmarks: the Benchmark base class, the BenchResult it gives, and their bench-style dict form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from gpudash.plugins_api.devices import Device
from gpudash.plugins_api.plain_data import PlainData
from gpudash.precisions import PRECISIONS


@dataclass
class BenchResult(PlainData):
    """One measured case, in the shape of a `plugin_benchmarks` result of `gpudash bench --json`."""

    precision: str  # a name from PRECISIONS
    op: str  # "matmul", "adaptive_matmul", "axpy", ...
    shape: list[int]
    gflops: float | None
    median_s: float | None
    efficiency: float | None = None  # measured / theoretical peak; gpudash fills it when left None
    details: dict[str, Any] = field(default_factory=dict)  # anything else worth showing (speedup, error)


class Benchmark:
    """Base class for a benchmark. Subclass it, set `name`, implement `run(device, budget_s)`.

    `run` returns a list of BenchResult (or bench-style dicts, or gpudash.measure.schema.PrecisionTestResult).
    `budget_s` is roughly how long to spend timing each case. Benchmarks never run on a replayed machine.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    timeout_s: ClassVar[float | None] = None

    def run(self, device: Device, budget_s: float) -> list[BenchResult]:
        raise NotImplementedError(f"{type(self).__name__}.run")


def bench_result_dict(item: Any) -> dict[str, Any]:
    """A benchmark's result item (BenchResult, dict or PrecisionTestResult) as a bench-style dict."""
    from gpudash.measure.schema import PrecisionTestResult

    if isinstance(item, BenchResult):
        out = item.to_dict()
    elif isinstance(item, PrecisionTestResult):
        n = item.test_size
        latency = item.mean_latency_ms
        out = {
            "precision": item.precision,
            "op": "matmul",
            "shape": [n, n, n] if n else [],
            "gflops": item.measured_gflops,
            "median_s": latency / 1e3 if latency is not None else None,
            "efficiency": item.efficiency,
            "details": {k: v for k, v in item.to_dict().items() if v not in (None, {}, [])},
        }
    elif isinstance(item, dict):
        out = dict(item)
    else:
        raise TypeError(
            f"a benchmark result must be a BenchResult, dict or PrecisionTestResult, not {type(item).__name__}"
        )
    missing = [k for k in ("precision", "op", "gflops", "median_s") if k not in out]
    if missing:
        raise ValueError(f"benchmark result lacks {', '.join(missing)}")
    if out["precision"] not in PRECISIONS:
        raise ValueError(f"benchmark result precision {out['precision']!r} is not one of {', '.join(PRECISIONS)}")
    out.setdefault("shape", [])
    out.setdefault("efficiency", None)
    out["shape"] = [int(v) for v in out["shape"]]
    return out
