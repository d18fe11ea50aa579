"""Inputs and the matmul call for one precision and shape, built before any timing starts.

Layout follows ml-engineering's mamf-finder.py and the `_scaled_mm` rules of PyTorch's ScaledBlas.cpp: A is row-major
(M, K); B is made as (N, K) and passed transposed, so it is column-major K x N. That is also what
`x @ weight.t()` in an nn.Linear does. Inputs are made in their final dtype here, so the timed call does
no conversion, and the output is preallocated.

- fp64, fp32, fp16, bf16: torch.mm(A, B, out=C). fp32 is pinned to IEEE fp32 (no TF32 or bf16 shortcut);
  tf32 is the same fp32 matmul with TF32 allowed (GPUs only).
- fp8_e4m3, fp8_e5m2: torch._scaled_mm with fp32 per-tensor scales and a bf16 output. The fp8 flavour comes
  from the architecture tables (float8_e4m3fnuz on gfx942). For e5m2, A is e5m2 and B is e4m3 (the
  gradient x weight pairing): CUDA rejects e5m2 x e5m2. K and N must be multiples of 16.
- int8: torch._int_mm (int32 output). On GPUs M must exceed 16 and K, N be multiples of 8.
"""

from __future__ import annotations

from collections.abc import Callable

FLOAT_DTYPES = {"fp64": "float64", "fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}
FP8 = ("fp8_e4m3", "fp8_e5m2")


class NotRunnable(Exception):
    """This precision cannot be tried on this device at all (the reason is the message)."""


def set_fp32_mode(torch, device: str, precision: str) -> str:
    """Pin what an fp32 matmul may do: 'ieee' for fp32, 'tf32' for tf32. Returns the mode set."""
    mode = "tf32" if precision == "tf32" else "ieee"
    if device == "cpu":
        if precision == "tf32":
            raise NotRunnable("no TF32 matmul on the CPU")
        backend = getattr(getattr(torch.backends, "mkldnn", None), "matmul", None)
        if backend is not None and hasattr(backend, "fp32_precision"):
            backend.fp32_precision = "ieee"  # "bf16" here would make fp32 matmuls silently bf16
        return mode
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = mode
    else:
        matmul.allow_tf32 = precision == "tf32"
    return mode


def check_alignment(precision: str, device: str, m: int, n: int, k: int) -> str | None:
    """The shape rules torch enforces (`_scaled_mm` in ScaledBlas.cpp, `_int_mm` in Blas.cpp); None when fine."""
    if precision in FP8 and (k % 16 or n % 16):
        return f"_scaled_mm needs K and N divisible by 16, got K={k}, N={n}"
    if precision == "int8" and device != "cpu" and (m <= 16 or k % 8 or n % 8):
        return f"_int_mm on GPUs needs M > 16 and K, N divisible by 8, got {m}x{n}x{k}"
    return None


def _fp8_dtypes(torch, precision: str, dtypes: dict[str, str | None]) -> tuple:
    e4m3 = dtypes.get("fp8_e4m3") or "float8_e4m3fn"
    e5m2 = dtypes.get("fp8_e5m2") or "float8_e5m2"
    names = (e5m2, e4m3) if precision == "fp8_e5m2" else (e4m3, e4m3)
    missing = [n for n in dict.fromkeys(names) if not hasattr(torch, n)]
    if missing:
        raise NotRunnable(f"this torch ({torch.__version__}) has no {', '.join(missing)}")
    if not hasattr(torch, "_scaled_mm"):
        raise NotRunnable(f"this torch ({torch.__version__}) has no torch._scaled_mm")
    return tuple(getattr(torch, n) for n in names)


def dtype_names(torch, precision: str, dtypes: dict[str, str | None]) -> list[str]:
    """The torch dtypes of A and B for the record ("float8_e5m2 x float8_e4m3fn")."""
    if precision in FP8:
        return [str(d).replace("torch.", "") for d in _fp8_dtypes(torch, precision, dtypes)]
    if precision == "int8":
        return ["int8", "int8"]
    if precision not in FLOAT_DTYPES:
        raise NotRunnable(f"gpudash has no matmul benchmark for {precision}")
    return [FLOAT_DTYPES[precision]] * 2


def make_matmul(
    torch, precision: str, device: str, m: int, n: int, k: int, dtypes: dict[str, str | None]
) -> Callable[[], object]:
    """Allocate A, B and the output on `device`; return the call to time."""
    gen = torch.Generator(device="cpu").manual_seed(m * 31 + n * 17 + k)
    if precision == "int8":
        if not hasattr(torch, "_int_mm"):
            raise NotRunnable(f"this torch ({torch.__version__}) has no torch._int_mm")
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=gen).to(device)
        b = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=gen).to(device).t()
        c = torch.empty(m, n, dtype=torch.int32, device=device).fill_(1)  # touched: no page faults when timed
        return lambda: torch._int_mm(a, b, out=c)
    if precision in FP8:
        a_dtype, b_dtype = _fp8_dtypes(torch, precision, dtypes)
        # randn is well inside every fp8 range (e4m3fnuz max 240); cast on the host, then move.
        a = torch.randn(m, k, generator=gen).to(a_dtype).to(device)
        b = torch.randn(n, k, generator=gen).to(b_dtype).to(device).t()
        scale_a = torch.ones((), dtype=torch.float32, device=device)  # dequant scales must be fp32
        scale_b = torch.ones((), dtype=torch.float32, device=device)
        c = torch.empty(m, n, dtype=torch.bfloat16, device=device).fill_(1)
        return lambda: torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, out=c)
    if precision not in FLOAT_DTYPES:
        raise NotRunnable(f"gpudash has no matmul benchmark for {precision}")
    dtype = getattr(torch, FLOAT_DTYPES[precision])
    a = torch.randn(m, k, generator=gen).to(device=device, dtype=dtype)
    b = torch.randn(n, k, generator=gen).to(device=device, dtype=dtype).t()
    c = torch.empty(m, n, dtype=dtype, device=device).fill_(1)
    return lambda: torch.mm(a, b, out=c)
