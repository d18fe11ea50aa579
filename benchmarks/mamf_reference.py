#!/usr/bin/env python
"""Maximum achievable matmul throughput on the CPU, measured with plain torch (no gpudash code).

An independent yardstick for `gpudash bench`, in the spirit of mamf-finder (stas00/ml-engineering):
sweep many shapes (M over a range with N and K fixed, plus squares), time each one after a warm-up,
and report the best median GFLOPS per dtype. mamf-finder has no CPU backend, so timing here uses
time.perf_counter around each call (a CPU matmul is synchronous).

Layout follows mamf-finder: A is row-major (M, K), B is made as (N, K) and passed transposed
(column-major K x N). fp32 and bf16 go through torch.mm with a preallocated output; int8 through
torch._int_mm (int32 result).

    python benchmarks/mamf_reference.py                 # fp32, bf16, int8; about a minute on 2 cores
    python benchmarks/mamf_reference.py --dtypes int8 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

DTYPES = ("fp32", "bf16", "int8")


def shapes(step: int, m_max: int, fixed: tuple[int, ...], squares: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(M, N, K): M from `step` to `m_max` in steps of `step` for each fixed N=K, then the squares."""
    out = [(m, nk, nk) for nk in fixed for m in range(step, m_max + 1, step)]
    out += [(n, n, n) for n in squares if (n, n, n) not in out]
    return out


def make_call(dtype: str, m: int, n: int, k: int):
    """Inputs built here, outside any timing; the returned call does the matmul only."""
    gen = torch.Generator().manual_seed(m * 7 + n * 13 + k)
    if dtype == "int8":
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=gen)
        b = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=gen).t()
        return lambda: torch._int_mm(a, b)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    a = torch.randn(m, k, generator=gen).to(torch_dtype)
    b = torch.randn(n, k, generator=gen).to(torch_dtype).t()
    c = torch.empty(m, n, dtype=torch_dtype)
    return lambda: torch.mm(a, b, out=c)


def time_call(call, seconds: float, min_reps: int = 5) -> tuple[float, int]:
    """Median seconds per call after a warm-up of about a fifth of the time."""
    warm_until = time.perf_counter() + seconds / 5
    call()
    while time.perf_counter() < warm_until:
        call()
    times: list[float] = []
    stop = time.perf_counter() + seconds
    while len(times) < min_reps or time.perf_counter() < stop:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(times)


def sweep(dtype: str, shape_list, seconds: float, verbose: bool) -> dict:
    best = {"gflops": 0.0}
    for m, n, k in shape_list:
        median, reps = time_call(make_call(dtype, m, n, k), seconds)
        gflops = 2.0 * m * n * k / median / 1e9
        if verbose:
            print(f"  {dtype:5} {m:5}x{n:5}x{k:5}  {gflops:8.1f} GFLOPS  ({reps} reps)", file=sys.stderr, flush=True)
        if gflops > best["gflops"]:
            best = {"gflops": gflops, "shape": [m, n, k], "median_s": median}
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated subset of fp32,bf16,int8")
    parser.add_argument("--seconds", type=float, default=0.25, help="timing per shape (warm-up adds a fifth)")
    parser.add_argument("--m-step", type=int, default=256)
    parser.add_argument("--m-max", type=int, default=4096)
    parser.add_argument("--nk", default="1024,2048", help="fixed N=K values for the M sweep")
    parser.add_argument("--squares", default="256,512,768,1024,1536,2048,3072")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quiet", action="store_true", help="no per-shape lines on stderr")
    args = parser.parse_args(argv)
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        parser.error(f"unknown dtype(s): {', '.join(bad)} (choose from {', '.join(DTYPES)})")
    shape_list = shapes(
        args.m_step,
        args.m_max,
        tuple(int(x) for x in args.nk.split(",")),
        tuple(int(x) for x in args.squares.split(",")),
    )
    # A cold CPU (clocks ramping, pages not yet touched) scores low: warm up first, as mamf-finder does.
    time_call(make_call("fp32", 1024, 1024, 1024), 1.0)
    started = time.perf_counter()
    results = {d: sweep(d, shape_list, args.seconds, not args.quiet) for d in dtypes}
    report = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "shapes": len(shape_list),
        "seconds": round(time.perf_counter() - started, 1),
        "best": results,
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"torch {report['torch']}, {report['threads']} threads, {len(shape_list)} shapes per dtype, "
            f"{report['seconds']} s"
        )
        for d, r in results.items():
            m, n, k = r["shape"]
            print(f"{d:5} best {r['gflops']:8.1f} GFLOPS at {m}x{n}x{k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
