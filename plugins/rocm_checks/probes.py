"""Device experiments behind the bf16 checks, written against any torch device so they also run on the CPU.

Each takes the torch module and a device string and returns plain numbers. The CPU is the reference: its
bf16 -> fp32 conversion is exact (a bit shift), so any other answer on the device is a bug. Sizes cover the
scalar, vector-tail and large vectorised paths, and strided views take the non-contiguous copy kernels
(the class of bug pytorch#163869 touched).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

SIZES = (1, 3, 64, 4097, 2**20 + 3)

# Hard cases for a conversion: signed zeros, min normal, subnormals, bf16's extremes, fp8/fp16 maxima.
SPECIALS = (
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.0,
    3.140625,
    2.0**-126,
    2.0**-130,
    -(2.0**-133),
    3.3895313892515355e38,
    -3.3895313892515355e38,
    1e30,
    65504.0,
    448.0,
    240.0,
    57344.0,
    1e-30,
)


def known_bf16(torch, size: int):
    """`size` bf16 values on the CPU: the specials, a ramp, and seeded normals across many magnitudes."""
    gen = torch.Generator().manual_seed(1234)
    ramp = torch.arange(-512, 512, dtype=torch.float32) * 0.37
    spread = torch.randn(2048, generator=gen) * torch.logspace(-20, 20, 2048)
    base = torch.cat([torch.tensor(SPECIALS, dtype=torch.float32), ramp, spread]).to(torch.bfloat16)
    reps = -(-size // base.numel())
    return base.repeat(reps)[:size].contiguous()


def _bits(torch, t):
    t = t.contiguous()
    return t.view(torch.int16 if t.element_size() == 2 else torch.int32)


def _compare(torch, got, want) -> tuple[int, int]:
    """(elements whose bits differ, elements that came back 0 although they are not)."""
    differ = int((_bits(torch, got) != _bits(torch, want)).sum())
    zeros = int(((got == 0) & (want != 0)).sum())
    return differ, zeros


class _Tally:
    def __init__(self) -> None:
        self.cases = self.elements = self.mismatches = self.zeros = 0
        self.first: str | None = None

    def add(self, label: str, differ: int, zeros: int, n: int) -> None:
        self.cases += 1
        self.elements += n
        self.mismatches += differ
        self.zeros += zeros
        if differ and self.first is None:
            self.first = f"{label}: {differ} of {n} differ ({zeros} became zero)"

    def report(self, **extra: Any) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "elements": self.elements,
            "mismatches": self.mismatches,
            "zeros_where_nonzero": self.zeros,
            "first_failure": self.first,
            **extra,
        }


def conversion_report(torch, device: str, convert: Callable | None = None, sizes=SIZES) -> dict[str, Any]:
    """bf16 -> fp32 on `device` (`.float()` and `.to(torch.float32)` by default) against the CPU."""
    converters = (
        {"convert": convert}
        if convert
        else {".float()": lambda t: t.float(), ".to(torch.float32)": lambda t: t.to(torch.float32)}
    )
    tally = _Tally()
    for size in sizes:
        src = known_bf16(torch, size)
        want = src.float()
        on_device = src.to(device)
        for name, fn in converters.items():
            for layout, view, ref in (("contiguous", on_device, want), ("strided", on_device[::2], want[::2])):
                got = fn(view).cpu()
                tally.add(f"{name} {layout} n={size}", *_compare(torch, got, ref), ref.numel())
    return tally.report()


def round_trip_report(torch, device: str, sizes=SIZES) -> dict[str, Any]:
    """Device <-> CPU: bf16 copies both ways, fp32 -> bf16 rounding on the device, and the guide's save path."""
    tally = _Tally()
    gen = torch.Generator().manual_seed(99)
    for size in sizes:
        src = known_bf16(torch, size)
        on_device = src.to(device)
        tally.add(f"bf16 to {device} and back n={size}", *_compare(torch, on_device.cpu(), src), size)
        via_fp32 = on_device.to(torch.float32).cpu().to(torch.bfloat16)  # convert before moving (the guide's fix)
        tally.add(f"fp32 on {device} then .cpu() n={size}", *_compare(torch, via_fp32, src), size)
        f32 = torch.randn(size, generator=gen) * 1000  # needs rounding: device and CPU must round alike
        rounded = f32.to(device).to(torch.bfloat16).cpu()
        tally.add(
            f"fp32 -> bf16 rounding on {device} n={size}", *_compare(torch, rounded, f32.to(torch.bfloat16)), size
        )
    return tally.report()


def save_load_report(torch, device: str, directory: str | None = None) -> dict[str, Any]:
    """bf16 tensors from the device through a file and back: safetensors if installed, else torch.save."""
    try:
        from safetensors.torch import load_file, save_file

        fmt = "safetensors"
    except ImportError:
        save_file = load_file = None
        fmt = "torch.save/torch.load (the safetensors package is not installed)"
    sources = {"latents": known_bf16(torch, 4097 * 3).reshape(3, 4097), "scalar_like": known_bf16(torch, 3)}
    on_device = {k: v.to(device) for k, v in sources.items()}
    tally = _Tally()
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = os.path.join(tmp, "cache.bin")
        if save_file is not None:
            save_file({k: v.detach().cpu().contiguous() for k, v in on_device.items()}, path)
            as_stored = load_file(path, device=str(device))
            on_cpu = load_file(path)
        else:
            torch.save(on_device, path)
            as_stored = torch.load(path, map_location=device)
            on_cpu = torch.load(path, map_location="cpu")
        for name, src in sources.items():
            got = as_stored[name]
            tally.add(f"{name} saved and loaded as bf16", *_compare(torch, got.cpu(), src), src.numel())
            # The guide's workaround: load on the CPU and convert there.
            tally.add(f"{name} loaded as fp32", *_compare(torch, on_cpu[name].float(), src.float()), src.numel())
            tally.add(
                f"{name} loaded bf16 then .float() on {device}",
                *_compare(torch, got.float().cpu(), src.float()),
                src.numel(),
            )
    return tally.report(format=fmt)


def cache_report(torch, device: str, process: Callable | None = None) -> dict[str, Any]:
    """Make a bf16 latent cache the way training scripts do and look for NaN, Inf and collapsed zeros."""
    process = process or (lambda t: t * 0.18215)  # a VAE scaling factor: any elementwise bf16 op will do
    gen = torch.Generator().manual_seed(7)
    latents = (torch.randn(4, 16, 32, 32, generator=gen) * 4).to(torch.bfloat16)
    reference = process(latents)  # the same op on the CPU
    produced = process(latents.to(device))
    paths = {
        "direct .cpu()": produced.cpu(),
        "fp32 on device, .cpu(), back to bf16": produced.to(torch.float32).cpu().to(torch.bfloat16),
    }
    out: dict[str, Any] = {"paths": {}}
    ref_zero = float((reference == 0).float().mean())
    for name, cached in paths.items():
        finite = torch.isfinite(cached)
        both = finite & torch.isfinite(reference)
        diff = (cached.float() - reference.float()).abs()[both]
        scale = reference.float().abs()[both].clamp(min=1e-30)
        out["paths"][name] = {
            "nonfinite": int((~finite).sum()),
            "zero_fraction": float((cached == 0).float().mean()),
            "max_rel_diff_vs_cpu": float((diff / scale).max()) if diff.numel() else 0.0,
        }
    out["reference_zero_fraction"] = ref_zero
    out["mean_finite"] = bool(torch.isfinite(produced.float().mean()))
    return out
