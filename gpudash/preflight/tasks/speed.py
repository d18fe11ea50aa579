"""One rank's matmul rate per precision and its numerics fingerprint (runs in the runner's child).

Rate: gpudash's bench method (measure/bench/tasks/matmul.interleaved): the precisions timed in alternation
round by round, rounds that saw other load left out, a shape with too few quiet rounds marked contended. The
rate of a precision is its best quiet shape; ranks compare it with their same-model peers.

Fingerprint: the same computation on every rank, bit for bit: fixed seed, fixed shapes, a chain of matmuls
(each output, scaled back to a unit range, is the next input), then SHA-256 over the output's bytes. Ranks
with the same device model, torch and thread count must agree; a rank that differs computes different bits
(silent data corruption, another kernel chosen, another library).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

FINGERPRINT_SEED = 20241124
FINGERPRINT_N = 256  # square operands; a power of two, so every kernel's tiling divides it
FINGERPRINT_STEPS = 4


def output_bytes(torch, tensor) -> bytes:
    """The output's raw bytes, in memory order (what the fingerprint hashes)."""
    flat = tensor.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8).cpu().numpy().tobytes()


def fingerprint(device: str, precision: str) -> dict[str, Any]:
    import torch

    from gpudash.measure.bench.tasks.operands import FLOAT_DTYPES, set_fp32_mode

    if precision not in FLOAT_DTYPES:
        return {"sha256": None, "error": f"no fingerprint for {precision}"}
    try:
        if precision in ("fp32", "tf32"):
            set_fp32_mode(torch, device, precision)
        dtype = getattr(torch, FLOAT_DTYPES[precision])
        gen = torch.Generator(device="cpu").manual_seed(FINGERPRINT_SEED)
        n = FINGERPRINT_N
        x = torch.randn(n, n, generator=gen).to(device=device, dtype=dtype)
        weights = [(torch.randn(n, n, generator=gen) / n**0.5).to(device=device, dtype=dtype)
                   for _ in range(FINGERPRINT_STEPS)]  # fmt: skip
        for w in weights:
            x = torch.mm(x, w)
        if device != "cpu":
            torch.cuda.synchronize()
        return {"sha256": hashlib.sha256(output_bytes(torch, x)).hexdigest(), "error": None}
    except Exception as exc:
        return {"sha256": None, "error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"}


def _best(sweep: dict[str, Any]) -> dict[str, Any]:
    quiet = [c for c in sweep["cases"] if c.get("status") == "ok" and not c.get("contended")]
    busy = [c for c in sweep["cases"] if c.get("status") == "ok" and c.get("contended")]
    pick = max(quiet or busy, key=lambda c: c["gflops"], default=None)
    return {
        "gflops": pick["gflops"] if pick else None,
        "shape": pick["shape"] if pick else None,
        "contended": bool(pick and pick.get("contended")),
        "error": None if pick else (sweep.get("failure_reason") or sweep.get("stopped") or "no case ran"),
    }


def measure(device: str, precisions: list[str], shapes: list[list[int]], measure_s: float,
            case_budget_s: float) -> dict[str, Any]:  # fmt: skip
    import torch

    from gpudash.measure.bench.tasks.matmul import interleaved

    began = time.time()
    out = interleaved(device, precisions, shapes, measure_s, case_budget_s)
    return {
        "window": [began, time.time()],  # the timed matmuls, in wall-clock seconds (comparable across ranks)
        "threads": torch.get_num_threads() if device == "cpu" else None,
        "rates": {p: _best(s) for p, s in out["sweeps"].items()},
        "fingerprints": {p: fingerprint(device, p) for p in precisions},
    }
