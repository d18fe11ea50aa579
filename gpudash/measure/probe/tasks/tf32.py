"""TF32: what torch.set_float32_matmul_precision('high') does to an fp32 matmul here, in error and speed.

TF32 counts as verified only when the setting visibly takes effect (the error rises from fp32's level to
TF32's, at least IN_EFFECT_FACTOR times the 'highest' error) and stays within TF32's tolerance. Where
nothing changes, the device has no TF32 path and the verdict says so. On the CPU the 'medium' setting
selects oneDNN's bf16 mode for fp32 matmuls (torch.backends.mkldnn.matmul.fp32_precision = 'bf16');
its measured effect is reported too, as the CPU's nearest relative of TF32.
"""

from __future__ import annotations

import torch

from gpudash.measure.probe.tasks import timing
from gpudash.measure.probe.tasks.matmul import SHAPE, compare, exact64, fp32_matmul_precision, timing_shape

TOLERANCE = 2e-3  # inputs rounded to 10 mantissa bits: about 2^-10 per product, plus fp32 accumulation
IN_EFFECT_FACTOR = 8.0
FP32_FLOOR = 2.0**-24  # errors below fp32's unit roundoff are all "full fp32"


def _fp32_operands(shape, device: str, seed: int):
    gen = torch.Generator().manual_seed(seed)
    m, k, n = shape
    a = torch.randn(m, k, generator=gen)
    b = torch.randn(k, n, generator=gen)
    return a, b, a.to(device), b.to(device)


def _mode_run(mode: str, a, b):
    def run():
        with fp32_matmul_precision(mode):
            return a @ b

    return run


def _effect(mode: str, device: str, a, b, a_d, b_d, t_a, t_b) -> dict:
    """Error at SHAPE and speed at the timing shape of one mode, against 'highest'."""
    out = _mode_run(mode, a_d, b_d)()
    timing.synchronize(device)
    err = compare(out, exact64(a), exact64(b), TOLERANCE)
    mode_s, ieee_s, _ = timing.best_of_pair(_mode_run(mode, t_a, t_b), _mode_run("highest", t_a, t_b), device)
    return {
        "max_rel_error": err["max_rel_error"],
        "max_abs_error": err["max_abs_error"],
        "nan_or_inf": err["frac_nan"] + err["frac_inf"] > 0,
        "speedup_vs_ieee": ieee_s / mode_s,
    }


def backend_settings() -> dict:
    """fp32_precision of each matmul backend as torch reports it (newer torch only)."""
    out = {}
    for backend in ("cuda", "mkldnn"):
        matmul = getattr(getattr(torch.backends, backend, None), "matmul", None)
        value = getattr(matmul, "fp32_precision", None)
        if isinstance(value, str):
            out[backend] = value
    return out


def tf32_effect(device: str) -> dict:
    a, b, a_d, b_d = _fp32_operands(SHAPE, device, seed=0)
    _, _, t_a, t_b = _fp32_operands(timing_shape(device), device, seed=1)
    ieee = _mode_run("highest", a_d, b_d)()
    timing.synchronize(device)
    ieee_err = compare(ieee, exact64(a), exact64(b), TOLERANCE)["max_rel_error"]
    high = _effect("high", device, a, b, a_d, b_d, t_a, t_b)
    with fp32_matmul_precision("high"):
        settings_high = backend_settings()
    result = {
        "check": "tf32_effect",
        "shape": list(SHAPE),
        "timing_shape": list(timing_shape(device)),
        "ieee_max_rel_error": ieee_err,
        "tf32": high,
        "settings_with_high": settings_high,
        "tolerance": TOLERANCE,
        "max_rel_error": high["max_rel_error"],
        "max_abs_error": high["max_abs_error"],
        "reason": None,
    }
    in_effect = high["max_rel_error"] > IN_EFFECT_FACTOR * max(ieee_err, FP32_FLOOR)
    result["in_effect"] = in_effect
    if high["nan_or_inf"]:
        result["reason"] = "fp32 matmul with TF32 allowed gave NaN or Inf"
    elif not in_effect:
        result["reason"] = (
            f"no TF32 on {device}: with torch.set_float32_matmul_precision('high') the fp32 matmul "
            f"kept full fp32 precision (max rel error {high['max_rel_error']:.2g}) at "
            f"{high['speedup_vs_ieee']:.2f}x the 'highest' speed"
        )
    elif high["max_rel_error"] > TOLERANCE:
        result["reason"] = (
            f"TF32 matmul max relative error {high['max_rel_error']:.3g} is above the tolerance {TOLERANCE:g}"
        )
    if not device.startswith("cuda"):
        medium = _effect("medium", device, a, b, a_d, b_d, t_a, t_b)
        with fp32_matmul_precision("medium"):
            medium["settings"] = backend_settings()
        medium["in_effect"] = medium["max_rel_error"] > IN_EFFECT_FACTOR * max(ieee_err, FP32_FLOOR)
        result["mkldnn_bf16"] = medium
        result["note"] = (
            "CPU: torch.set_float32_matmul_precision('medium') selects oneDNN's bf16 mode for fp32 matmuls "
            f"(mkldnn fp32_precision '{medium['settings'].get('mkldnn', 'bf16')}'); measured here: "
            f"{'bf16 rounding in effect' if medium['in_effect'] else 'error unchanged, so not in effect'} "
            f"(max rel error {medium['max_rel_error']:.2g}), {medium['speedup_vs_ieee']:.2f}x the 'highest' speed"
        )
    result["ok"] = result["reason"] is None
    return result
