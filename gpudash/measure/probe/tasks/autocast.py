"""One training step of a small MLP under torch.autocast, compared with the same step in float64.

What it proves for a mixed-precision dtype: autocast really computes the Linear layers in that dtype on
this device (torch may silently fall back), the forward loss and every gradient match the fp64 step
within the dtype's tolerance, and nothing is NaN, Inf or all zero. fp16 runs with a GradScaler (dynamic
loss scaling), as training would; the step must not be skipped for overflow.
"""

from __future__ import annotations

import copy
import time

import torch

# Normwise relative error of the loss and of each gradient: ||g - g_ref|| / ||g_ref||.
TOLERANCE = {"bf16": 5e-2, "fp16": 1e-2}
DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16}


def _model(gen: torch.Generator) -> torch.nn.Module:
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    return torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64), torch.nn.GELU(), torch.nn.Linear(64, 16)
    )


def _loss(model, x, y):
    out = model(x)
    return torch.nn.functional.mse_loss(out.float() if out.dtype != torch.float64 else out, y), out


def autocast_step(device: str, precision: str, seed: int = 0) -> dict:
    started = time.perf_counter()
    dtype = DTYPE[precision]
    gen = torch.Generator().manual_seed(seed)
    model = _model(gen)
    reference = copy.deepcopy(model).double()
    x = torch.randn(32, 64, generator=gen)
    y = torch.randn(32, 16, generator=gen)
    ref_loss, _ = _loss(reference, x.double(), y.double())
    ref_loss.backward()

    model = model.to(device)
    device_type = device.split(":")[0]
    scaler = torch.amp.GradScaler(device_type, enabled=precision == "fp16")
    optimizer = _RecordingOptimizer(model.parameters())
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss, out = _loss(model, x.to(device), y.to(device))
    scale_before = scaler.get_scale() if scaler.is_enabled() else None
    scaler.scale(loss).backward()
    # GradScaler is annotated with torch.optim.Optimizer but only uses param_groups and step().
    scaler.unscale_(optimizer)  # type: ignore[arg-type]
    scaler.step(optimizer)  # type: ignore[arg-type]
    scaler.update()

    result = {
        "check": "autocast",
        "dtype": str(dtype).removeprefix("torch."),
        "autocast_output_dtype": str(out.dtype).removeprefix("torch."),
        "tolerance": TOLERANCE[precision],
        "grad_scaler": scaler.is_enabled(),
        "reason": None,
    }
    errors = {"loss": _rel(loss.detach().to("cpu").double(), ref_loss.detach())}
    for (name, p), (_, p_ref) in zip(model.named_parameters(), reference.named_parameters()):
        if p.grad is None or p_ref.grad is None:
            result["reason"] = f"no gradient reached {name}"
            break
        errors[f"grad {name}"] = _rel(p.grad.detach().to("cpu").double(), p_ref.grad)
    worst = max(errors, key=errors.__getitem__)
    result["max_rel_error"] = errors[worst]
    result["worst"] = worst
    if scale_before is not None:
        result["loss_scale"] = scaler.get_scale()
    if result["reason"] is None:
        if out.dtype != dtype:
            result["reason"] = f"autocast ran the Linear layers in {out.dtype}, not {dtype}"
        elif not all(map(_finite, errors.values())):
            result["reason"] = f"{worst} is NaN or Inf"
        elif not optimizer.stepped:
            result["reason"] = "GradScaler found Inf/NaN gradients and skipped the step"
        elif errors[worst] > TOLERANCE[precision]:
            result["reason"] = (
                f"{worst} differs from the fp64 step by {errors[worst]:.3g} (tolerance {TOLERANCE[precision]:g})"
            )
    result["ok"] = result["reason"] is None
    result["seconds"] = time.perf_counter() - started
    return result


class _RecordingOptimizer:
    """What GradScaler needs from an optimizer (param_groups, step), recording whether step ran. A real
    torch.optim optimizer would import torch._dynamo on first use: over a second of the probe budget."""

    def __init__(self, params) -> None:
        self.param_groups = [{"params": list(params)}]
        self.stepped = False

    def step(self) -> None:
        self.stepped = True


def _rel(got: torch.Tensor, ref: torch.Tensor) -> float:
    """Normwise relative error; a zero or non-finite result counts as a total miss."""
    denom = float(ref.norm())
    diff = float((got - ref).norm())
    if not _finite(diff):
        return float("inf")
    return diff / denom if denom > 0 else diff


def _finite(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))
