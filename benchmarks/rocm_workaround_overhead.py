"""What the gpudash.rocm workarounds cost where they are not needed: each against the plain operation.

    python benchmarks/rocm_workaround_overhead.py [--reps 30] [--json]

On a device that does not need them (this CPU, any NVIDIA GPU, CDNA, RDNA4) each workaround should cost what
the plain operation costs: bf16_to_float32 against tensor.float(), cache_to_cpu against tensor.detach().cpu(),
save_cache against safetensors' save_file (it adds an atomic rename), load_safetensors_float32 against
load_file plus .float(). Each pair runs alternately on the same data, median of `--reps`, for a small and a
large tensor. For scale, the forced workaround path (via_cpu=True: raw 16-bit copy, conversion on the CPU) and
explicit NaN/Inf clamping are timed too: that is the price on a device that needs them, less the copy to the
CPU that a GPU adds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def median_s(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import torch

    from gpudash.rocm import bf16_to_float32, cache_to_cpu, clamp_nonfinite, load_safetensors_float32, save_cache

    try:
        from safetensors.torch import load_file, save_file
    except ImportError:
        raise SystemExit("this benchmark compares against safetensors: pip install safetensors") from None

    rows: list[dict[str, Any]] = []
    gen = torch.Generator().manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        for label, shape in (
            ("4x64x64 (32 KiB bf16)", (4, 64, 64)),
            ("16x4x128x128 (2 MiB)", (16, 4, 128, 128)),
            ("64x16x128x128 (32 MiB)", (64, 16, 128, 128)),
        ):
            t = torch.randn(*shape, generator=gen).bfloat16()
            cache = {"latents": t}
            plain_path, ours_path = os.path.join(tmp, "plain.safetensors"), os.path.join(tmp, "ours.safetensors")
            save_file(cache, plain_path)
            pairs = {
                "bf16_to_float32 vs .float()": (lambda t=t: t.float(), lambda t=t: bf16_to_float32(t)),
                "cache_to_cpu vs .detach().cpu()": (lambda t=t: t.detach().cpu(), lambda t=t: cache_to_cpu(t)),
                "save_cache vs save_file": (
                    lambda c=cache, p=plain_path: save_file(c, p),
                    lambda c=cache, p=ours_path: save_cache(c, p),
                ),
                "load_safetensors_float32 vs load_file + .float()": (
                    lambda p=plain_path: {k: v.float() for k, v in load_file(p).items()},
                    lambda p=plain_path: load_safetensors_float32(p),
                ),
            }
            for name, (plain, ours) in pairs.items():
                m = median_s({"plain": plain, "ours": ours}, args.reps)
                rows.append({"size": label, "case": name, "plain_us": m["plain"] * 1e6, "gpudash_us": m["ours"] * 1e6})
            forced = median_s(
                {
                    "float": lambda t=t: t.float(),
                    "via_cpu": lambda t=t: bf16_to_float32(t, via_cpu=True),
                    "clamp": lambda t=t: clamp_nonfinite(t),
                },
                args.reps,
            )
            rows.append(
                {
                    "size": label,
                    "case": "forced workaround: bf16_to_float32(via_cpu=True) vs .float()",
                    "plain_us": forced["float"] * 1e6,
                    "gpudash_us": forced["via_cpu"] * 1e6,
                }
            )
            rows.append(
                {
                    "size": label,
                    "case": "explicit clamp_nonfinite (NaN/Inf clamp) vs .float()",
                    "plain_us": forced["float"] * 1e6,
                    "gpudash_us": forced["clamp"] * 1e6,
                }
            )

    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"gpudash.rocm workarounds where none is needed (this CPU, torch {torch.__version__}), median of {args.reps}; load average {load:.2f}"
    )
    for row in rows:
        extra = row["gpudash_us"] - row["plain_us"]
        print(
            f"  {row['size']:24} {row['case']}: plain {row['plain_us']:.1f} us, gpudash {row['gpudash_us']:.1f} us ({extra:+.1f} us, {row['gpudash_us'] / row['plain_us']:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
