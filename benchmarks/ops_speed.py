"""gpudash.ops against plain torch on this machine: matmul, AdaptiveLinear and AdaptiveAttention.

    python benchmarks/ops_speed.py [--reps 20] [--device cpu] [--json]

Each pair runs the same operands alternately (warm-up first), and the figure is the median wall time of
`--reps` calls; on a GPU the device is synchronised around each call. Beside each adaptive figure: the kernel
or precision it used, its speed against plain fp32 torch, and the relative error (Frobenius) of its result
against plain fp32 torch, because a faster kernel that changes the answer is a trade, not a gain. The plain
bf16 line is torch doing the same casts as the bf16 kernel by hand: adaptive minus that is the dispatch cost.
The tiny case measures that cost alone. Nothing here is claimed for a device it did not run on.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def median_s(fns: dict[str, Callable[[], Any]], reps: int, sync: Callable[[], None]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up: first-call allocations, kernel selection, plugin loading
        fn()
    sync()
    for _ in range(reps):
        for name, fn in fns.items():  # alternate, so a busy moment costs every contender alike
            start = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def rel_error(got, want) -> float:
    return float((got.double() - want.double()).norm() / want.double().norm())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import torch
    from torch import nn

    from gpudash.ops import AdaptiveAttention, AdaptiveLinear, default_dispatcher, matmul_with_info

    dev = torch.device(args.device)
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
    gen = torch.Generator().manual_seed(0)
    rows: list[dict[str, Any]] = []
    numerics: dict[str, float] = {}  # kernel -> relative error against fp32 on the seed's example

    def report(case: str, plain: float, adaptive: float, used: str, error: float, extra: dict | None = None) -> None:
        rows.append(
            {
                "case": case,
                "torch_fp32_ms": plain * 1e3,
                "gpudash_ms": adaptive * 1e3,
                "speedup": plain / adaptive,
                "kernel": used,
                "rel_error_vs_fp32": error,
                **(extra or {}),
            }
        )

    with torch.no_grad():
        for label, x_shape, w_shape in (
            ("matmul 8x1024x512 -> 256 (the seed's example)", (8, 1024, 512), (256, 512)),
            ("matmul 2048x2048x2048", (2048, 2048), (2048, 2048)),
            ("matmul 4x64 -> 64 (dispatch cost)", (4, 64), (64, 64)),
        ):
            x = torch.randn(*x_shape, generator=gen).to(dev)
            w = torch.randn(*w_shape, generator=gen).to(dev)
            got, used = matmul_with_info(x, w)
            want = torch.matmul(x, w.t())
            t = median_s(
                {
                    "plain": lambda x=x, w=w: torch.matmul(x, w.t()),
                    "bf16 by hand": lambda x=x, w=w: torch.matmul(x.bfloat16(), w.bfloat16().t()).float(),
                    "adaptive": lambda x=x, w=w: matmul_with_info(x, w),
                },
                args.reps,
                sync,
            )
            report(
                label,
                t["plain"],
                t["adaptive"],
                used,
                rel_error(got, want),
                {"torch_bf16_casts_ms": t["bf16 by hand"] * 1e3},
            )

        x = torch.randn(8, 1024, 512, generator=gen).to(dev)
        plain_linear = nn.Linear(512, 256).to(dev)
        adaptive_linear = AdaptiveLinear.from_linear(plain_linear)
        want = plain_linear(x)
        got = adaptive_linear(x)
        t = median_s({"plain": lambda: plain_linear(x), "adaptive": lambda: adaptive_linear(x)}, args.reps, sync)
        report(
            "Linear 512->256 on 8x1024, forward",
            t["plain"],
            t["adaptive"],
            str(adaptive_linear.last_kernel),
            rel_error(got, want),
        )

        torch.manual_seed(0)
        attention = AdaptiveAttention(512, 8).to(dev)
        mha = nn.MultiheadAttention(512, 8, batch_first=True).to(dev)
        with torch.no_grad():  # the same weights in nn.MultiheadAttention's layout
            mha.in_proj_weight.copy_(
                torch.cat([attention.q_proj.weight, attention.k_proj.weight, attention.v_proj.weight])
            )
            mha.in_proj_bias.copy_(torch.cat([attention.q_proj.bias, attention.k_proj.bias, attention.v_proj.bias]))
            mha.out_proj.weight.copy_(attention.out_proj.weight)
            mha.out_proj.bias.copy_(attention.out_proj.bias)
        mha.eval()
        attention.eval()
        want = mha(x, x, x, need_weights=False)[0]
        got = attention(x)
        t = median_s(
            {"plain": lambda: mha(x, x, x, need_weights=False), "adaptive": lambda: attention(x)},
            max(3, args.reps // 4),
            sync,
        )
        report(
            "attention 512 wide, 8 heads, on 8x1024 (vs nn.MultiheadAttention fp32)",
            t["plain"],
            t["adaptive"],
            f"{attention.last_precision} sdpa ({attention.last_backend}), projections {attention.q_proj.last_kernel}",
            rel_error(got, want),
        )

        # fp8's numerics, which gpudash.ops uses only with allow_fp8=True: the built-in per-tensor scaled e4m3
        # kernel itself (torch._scaled_mm; on a CPU torch computes it in software), on the seed's example.
        fp8 = next((k for k in default_dispatcher(True).kernels if k.name == "fp8_e4m3fn_scaled_mm"), None)
        if fp8 is not None and hasattr(torch, "_scaled_mm"):
            x2, w = torch.randn(8 * 1024, 512, generator=gen).to(dev), torch.randn(256, 512, generator=gen).to(dev)
            want = torch.matmul(x2, w.t())
            errors = {
                "fp8_e4m3fn_scaled_mm": rel_error(fp8.implementation(x2, w), want),
                "bf16": rel_error(torch.matmul(x2.bfloat16(), w.bfloat16().t()), want),
            }
            numerics.update(errors)

    x = torch.randn(8, 1024, 512, generator=gen, requires_grad=True).to(dev)

    def train_step(layer):
        layer.zero_grad(set_to_none=True)
        layer(x).square().mean().backward()

    t = median_s(
        {"plain": lambda: train_step(plain_linear), "adaptive": lambda: train_step(adaptive_linear)}, args.reps, sync
    )
    report(
        "Linear 512->256 on 8x1024, forward + backward",
        t["plain"],
        t["adaptive"],
        str(adaptive_linear.last_kernel),
        float("nan"),
    )

    where = f"{dev} ({torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} logical CPUs)"
    if args.json:
        print(json.dumps({"device": where, "rows": rows, "rel_error_vs_fp32": numerics}, indent=2))
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"gpudash.ops vs plain torch on {where}, median of {args.reps} calls; load average {load:.2f}")
    for row in rows:
        error = (
            ""
            if row["rel_error_vs_fp32"] != row["rel_error_vs_fp32"]
            else f", error vs fp32 {row['rel_error_vs_fp32']:.1e}"
        )
        by_hand = (
            f" (torch bf16 with the same casts {row['torch_bf16_casts_ms']:.3f} ms)"
            if "torch_bf16_casts_ms" in row
            else ""
        )
        print(
            f"  {row['case']}: torch fp32 {row['torch_fp32_ms']:.3f} ms, gpudash {row['gpudash_ms']:.3f} ms "
            f"= {row['speedup']:.2f}x [{row['kernel']}{error}]{by_hand}"
        )
    if numerics:
        errors = ", ".join(f"{name} {error:.1e}" for name, error in numerics.items())
        print(f"  relative error against fp32 on 8x1024x512 -> 256: {errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
