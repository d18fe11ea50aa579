"""The child-side entry point: every check for one precision on one device, as JSON-able data.

A check that raises becomes a failed check with the exception's first line; one that crashes or hangs
the process is caught by the runner in the parent. The parent turns the checks into a verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from gpudash.measure.probe.tasks import autocast, claims, conversion, matmul, tf32

# The torch dtypes each precision needs; a torch build without one cannot try that precision.
_FP8_DEFAULT = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def _checks(precision: str, device: str, fp8: dict[str, str]) -> list[tuple[str, Callable[[], dict]]]:
    mm = ("matmul", lambda: matmul.check_matmul(device, precision, fp8))
    if precision in ("fp64", "fp32"):
        return [mm]
    if precision == "tf32":
        return [("tf32_effect", lambda: tf32.tf32_effect(device))]
    if precision in ("fp16", "bf16"):
        name = matmul.TORCH_DTYPE[precision]
        return [
            mm,
            ("conversion", lambda: conversion.check_float_conversion(device, name)),
            ("autocast", lambda: autocast.autocast_step(device, precision)),
        ]
    if precision in ("fp8_e4m3", "fp8_e5m2"):
        flavour = fp8["e4m3" if precision == "fp8_e4m3" else "e5m2"]
        return [mm, ("conversion", lambda: conversion.check_float_conversion(device, flavour))]
    if precision == "int8":
        return [mm, ("conversion", lambda: conversion.check_int8_conversion(device))]
    if precision == "fp4":
        return [mm]
    raise ValueError(f"unknown precision {precision!r}")


def _needed_dtypes(precision: str, fp8: dict[str, str]) -> list[str]:
    if precision == "fp8_e4m3":
        return [fp8["e4m3"]]
    if precision == "fp8_e5m2":
        return [fp8["e5m2"], fp8["e4m3"]]
    if precision == "fp4":
        return ["float4_e2m1fn_x2"]
    return []


def _first_line(exc: BaseException, limit: int = 240) -> str:
    """The exception on one line (torch's messages list their rules over several), cut to `limit`."""
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return f"{type(exc).__name__}: {text}".rstrip(": ")


def run_probe(
    device: str, precision: str, fp8: dict[str, str] | None = None, progress: Callable[..., None] | None = None
) -> dict:
    """Probe `precision` on `device` ("cpu" or "cuda:N"; ROCm devices are cuda:N in torch too)."""
    fp8 = {**_FP8_DEFAULT, **(fp8 or {})}
    started = time.perf_counter()
    torch.manual_seed(0)
    # The CPU-side work (references, conversions, the CPU device itself) is small. One thread avoids the
    # thread pool's barrier waiting on a descheduled worker, which made a busy 2-vCPU machine 3-4x slower.
    torch.set_num_threads(1)
    out: dict = {
        "precision": precision,
        "device": device,
        "torch_version": torch.__version__,
        "fp8_dtypes": fp8 if precision.startswith("fp8") else None,
        "checks": [],
    }
    try:
        value, basis = claims.claim(precision, device)
    except Exception as exc:  # a broken query is torch's answer too
        value, basis = None, f"query failed: {_first_line(exc)}"
    out["torch"] = {"value": value, "basis": basis}
    missing = [
        name for name in _needed_dtypes(precision, fp8) if not isinstance(getattr(torch, name, None), torch.dtype)
    ]
    if missing:
        out["not_run"] = f"torch {torch.__version__} has no {', '.join(missing)} dtype"
        return out
    for name, check in _checks(precision, device, fp8):
        if progress is not None:
            progress(check=name)
        check_started = time.perf_counter()
        try:
            result = check()
        except Exception as exc:
            result = {"check": name, "ok": False, "raised": True, "reason": f"{name} raised {_first_line(exc)}"}
        result.setdefault("seconds", time.perf_counter() - check_started)
        out["checks"].append(result)
    out["seconds"] = time.perf_counter() - started
    return out
