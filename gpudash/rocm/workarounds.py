"""The ROCm compatibility guide's bf16 workarounds, as functions that cost nothing where they are not needed.

    from gpudash.rocm import bf16_to_float32, load_safetensors_float32, save_cache, clamp_nonfinite
    latents = bf16_to_float32(latents)                        # exact on every device
    cache = load_safetensors_float32("latents.safetensors", device="cuda")
    save_cache({"latents": latents}, "latents.safetensors")   # bf16 kept bit for bit, NaN/Inf clamped where needed

On a device that needs them (gpudash.rocm.affected: RDNA3 and RDNA3.5 by gpudash's tables) bf16 data never
goes through the device's conversion kernels: it crosses to the CPU as raw 16-bit words (a copy of int16 data,
which converts nothing) and is converted there with `.float()`, the path the guide found correct. Everywhere
else each function is the plain operation: `.float()`, a safetensors load, a save. `via_cpu=True/False`
overrides the device's answer.

Where this departs from the guide: its cache-saving recipe, t.to(torch.float32).cpu().to(torch.bfloat16), runs
the very bf16 -> fp32 conversion on the GPU that its own conversion table marks as producing zeros; copying the
raw words needs no conversion at all, so save_cache does that instead.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudash.errors import GpudashError
from gpudash.rocm.affected import decide

SAFETENSORS_HINT = "install it with `pip install safetensors`"


class MissingDependencyError(GpudashError):
    """An optional package a workaround needs is not installed."""


def _safetensors(function: str):
    try:
        import safetensors
        import safetensors.torch
    except ImportError:
        raise MissingDependencyError(
            f"{function} needs the safetensors package, which is not installed: {SAFETENSORS_HINT}"
        ) from None
    return safetensors


def raw_to_cpu(tensor: Any) -> Any:
    """A bf16/fp16 device tensor on the CPU without any conversion kernel: its 16-bit words copied as int16."""
    import torch

    words = tensor.detach().view(torch.int16)
    return words.cpu().view(tensor.dtype)


def bf16_to_float32(tensor: Any, *, via_cpu: bool | None = None, keep_on_cpu: bool = False) -> Any:
    """`tensor` as float32. A bf16 tensor on a device that needs the workaround is copied to the CPU as raw words
    and converted there (then moved back, unless keep_on_cpu); the result has no autograd history there.
    Anywhere else this is tensor.float()."""
    import torch

    if tensor.dtype != torch.bfloat16 or not decide(tensor.device, via_cpu):
        out = tensor.float()
        return out.cpu() if keep_on_cpu else out
    converted = raw_to_cpu(tensor).float()  # the CPU's bf16 -> fp32 is exact: the guide's recommended path
    return converted if keep_on_cpu else converted.to(tensor.device)


def count_nonfinite(tensor: Any) -> int:
    import torch

    if not (tensor.is_floating_point() or tensor.is_complex()):
        return 0
    return int((~torch.isfinite(tensor)).sum())


def clamp_nonfinite(tensor: Any, *, nan: float = 0.0) -> Any:
    """`tensor` with NaN replaced by `nan` and +/-Inf by the largest finite value of its dtype (torch.nan_to_num),
    as a cache should be written. Integer tensors are returned as they are."""
    import torch

    if not tensor.is_floating_point():
        return tensor
    return torch.nan_to_num(tensor, nan=nan)


def cache_to_cpu(tensor: Any, *, via_cpu: bool | None = None, clamp: bool | None = None) -> tuple[Any, int]:
    """(the tensor on the CPU in its own dtype, ready to be written, and how many NaN/Inf were clamped).
    On a device that needs the workaround, 16-bit data crosses as raw words and NaN/Inf are clamped (clamp=None
    means: there); elsewhere this is tensor.detach().cpu(), clamped only with clamp=True."""
    import torch

    affected = decide(tensor.device, via_cpu)
    if affected and tensor.dtype in (torch.bfloat16, torch.float16):
        on_cpu = raw_to_cpu(tensor)
    else:
        on_cpu = tensor.detach().cpu()
    if clamp is None:
        clamp = affected
    if not clamp:
        return on_cpu, 0
    bad = count_nonfinite(on_cpu)
    return (clamp_nonfinite(on_cpu) if bad else on_cpu), bad


@dataclass
class CacheReport:
    path: str
    format: str  # "safetensors" | "torch.save"
    tensors: int
    clamped: dict[str, int] = field(default_factory=dict)  # name -> NaN/Inf values replaced
    raw_copies: list[str] = field(default_factory=list)  # tensors that crossed to the CPU as raw 16-bit words


def save_cache(
    tensors: Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    clamp: bool | None = None,
    via_cpu: bool | None = None,
    metadata: Mapping[str, str] | None = None,
) -> CacheReport:
    """Write a cache of named tensors: safetensors for a ".safetensors" path (needs the package), torch.save
    otherwise. Each tensor goes through cache_to_cpu; the file is replaced atomically (a crash never leaves
    half a cache). Returns what was done."""
    import torch

    target = Path(path)
    fmt = "safetensors" if target.suffix == ".safetensors" else "torch.save"
    if fmt == "safetensors":
        _safetensors("save_cache")
    ready: dict[str, Any] = {}
    report = CacheReport(str(target), fmt, len(tensors))
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise GpudashError(f"save_cache: tensor names must be strings, got {name!r}")
        ready[name], bad = cache_to_cpu(tensor, via_cpu=via_cpu, clamp=clamp)
        if bad:
            report.clamped[name] = bad
        if decide(tensor.device, via_cpu) and tensor.dtype in (torch.bfloat16, torch.float16):
            report.raw_copies.append(name)
    _write_atomically(target, ready, fmt, metadata)
    return report


def _write_atomically(target: Path, ready: dict[str, Any], fmt: str, metadata: Mapping[str, str] | None) -> None:
    import torch

    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise GpudashError(f"save_cache: {directory} is not a directory")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(handle)
    try:
        if fmt == "safetensors":
            from safetensors.torch import save_file

            save_file({k: v.contiguous() for k, v in ready.items()}, temporary, metadata=dict(metadata or {}))
        else:
            torch.save(ready, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_safetensors_float32(
    path: str | os.PathLike[str],
    *,
    device: Any = "cpu",
    keys: Iterable[str] | None = None,
    via_cpu: bool | None = None,
) -> dict[str, Any]:
    """The tensors of a safetensors file (all, or `keys`) with every floating-point tensor as float32, on
    `device`. Where `device` needs the workaround the file is read on the CPU and converted there, and only
    float32 data goes to the device; elsewhere the file is read straight onto `device` and converted there.
    Integer tensors keep their dtype. Needs the safetensors package."""
    _safetensors("load_safetensors_float32")
    import torch
    from safetensors import safe_open

    source = Path(path)
    if not source.is_file():
        raise GpudashError(f"{source}: no such safetensors file")
    where = str(device)
    on_cpu = where == "cpu" or decide(where, via_cpu)
    out: dict[str, Any] = {}
    try:
        opened = safe_open(str(source), framework="pt", device="cpu" if on_cpu else where)
    except Exception as exc:  # safetensors' own errors: a header it cannot read, a truncated file
        raise GpudashError(f"{source}: not a readable safetensors file ({exc})") from None
    with opened as handle:
        names = list(handle.keys())
        wanted = names if keys is None else list(keys)
        missing = [k for k in wanted if k not in names]
        if missing:
            raise GpudashError(f"{source}: no tensor named {missing[0]!r} (it has: {', '.join(names) or 'none'})")
        for name in wanted:
            tensor = handle.get_tensor(name)
            if tensor.is_floating_point() and tensor.dtype != torch.float32:
                tensor = tensor.float()  # on the CPU where the device needs it: the guide's correct path
            out[name] = tensor if where == "cpu" or not on_cpu else tensor.to(where)
    return out
