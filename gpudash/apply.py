"""Use an exported settings file in training code.

    from gpudash.apply import load
    s = load("gpudash.toml")           # TOML or JSON, as written by `gpudash export`
    s.apply_env()                      # before CUDA initialises: allocator and ROCm variables
    s.apply_torch_backends()           # TF32 / float32 matmul precision
    scaler = s.grad_scaler()           # a torch.amp.GradScaler, enabled only for float16
    with s.autocast():                 # bf16/fp16 autocast, or a no-op for fp32
        loss = model(batch)
    Trainer(**s.lightning_kwargs())    # precision="bf16-mixed", accumulate_grad_batches=...
    Accelerator(**s.accelerate_kwargs())
    TrainingArguments(output_dir, **s.hf_training_args_kwargs())
    DataLoader(dataset, **s.dataloader_kwargs())

Data parallel: the export sizes one device's batch and accumulation to reach the target effective batch. With N
processes (torchrun sets WORLD_SIZE; or pass world_size=N) each helper divides the accumulation by N: steps =
ceil(steps / N), never below 1, then the per-device batch is evened out to ceil(effective / (steps x N)), which
is never more than the exported size (so it still fits). The effective batch over all processes then lands
on the exported one or just above it, as whole steps allow; `per_process(N)` shows the three numbers.
Example: size 52, 5 steps (effective 260), N = 8 -> 1 step of 33 per process, 264 over all 8.

A missing or invalid file raises ExportFileError (a GpudashError and a ValueError) naming the file and key;
a WORLD_SIZE that is not a positive integer raises one naming WORLD_SIZE.
torch is imported only by the methods that need it.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpudash import strict_json
from gpudash.errors import GpudashError
from gpudash.fileio import read_user_file
from gpudash.plain_text import one_line

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DTYPES = ("bfloat16", "float16", "float32")
LOSS_SCALING = ("dynamic", "none")
ACCELERATE = ("no", "fp16", "bf16", "fp8")
SUPPORTED_VERSIONS = (1,)


WORLD_SIZE_ENV = "WORLD_SIZE"  # set by torchrun / torch.distributed.launch for every process


class ExportFileError(GpudashError, ValueError):
    """The export file is missing, unreadable, or lacks a key with the right type."""


def resolve_world_size(given: int | None = None) -> int:
    """The number of data-parallel processes: `given`, else WORLD_SIZE from the environment, else 1."""
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise ExportFileError(f"world_size: expected a positive integer, got {given!r}")
        return given
    raw = os.environ.get(WORLD_SIZE_ENV)
    if raw is None or raw.strip() == "":
        return 1
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ExportFileError(f"{WORLD_SIZE_ENV}={raw!r}: expected a positive integer (torchrun sets it)")
    return value


@dataclass(frozen=True)
class PerProcess:
    """One process's share of the exported batch under data parallelism."""

    world_size: int
    batch_size: int | None  # per device and step; None when the export has no batch size
    gradient_accumulation_steps: int | None
    effective_batch: int | None  # over all processes: batch_size x steps x world_size


def read_tree(path: str | os.PathLike) -> dict[str, Any]:
    """The raw tree of an export file (TOML, or JSON by extension or content): a regular file of bounded size,
    nested at most strict_json.MAX_DEPTH deep, finite numbers only, every string safe for the terminal."""
    p = Path(path)
    text = read_user_file(p, "export file", ExportFileError, hint=f" (write one with `gpudash export -o {p}`)")
    try:
        if p.suffix.lower() == ".json" or text.lstrip().startswith("{"):
            tree = strict_json.loads(text)
        else:
            tree = strict_json.checked(tomllib.loads(text))
    except strict_json.JsonProblem as exc:
        raise ExportFileError(f"{p}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExportFileError(f"{p}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ExportFileError(f"{p}: nested more than {strict_json.MAX_DEPTH} levels deep") from None
    if not isinstance(tree, dict):
        raise ExportFileError(f"{p}: expected a table at the top level")
    return tree


def _lookup(tree: dict[str, Any], dotted: str) -> Any:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


def _require(
    path: Path,
    tree: dict[str, Any],
    dotted: str,
    kind: type | tuple,
    choices=None,
    optional=False,
    minimum: int | None = None,
) -> Any:
    try:
        value = _lookup(tree, dotted)
    except KeyError:
        if optional:
            return None
        raise ExportFileError(f"{path}: missing key {dotted}") from None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise ExportFileError(f"{path}: {dotted}: expected {'/'.join(k.__name__ for k in kinds)}, got {_shown(value)}")
    if choices is not None and value not in choices:
        raise ExportFileError(f"{path}: {dotted}: expected one of {', '.join(map(str, choices))}, got {_shown(value)}")
    if minimum is not None and value < minimum:
        raise ExportFileError(f"{path}: {dotted}: expected at least {minimum}, got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    return one_line(repr(value), 80)


def _strings(path: Path, tree: dict[str, Any], name: str) -> dict[str, str]:
    """An optional table of strings (routing, reasons)."""
    table = _require(path, tree, name, dict, optional=True) or {}
    for key, value in table.items():
        if not isinstance(value, str):
            raise ExportFileError(f"{path}: {name}.{key}: expected a string, got {_shown(value)}")
    return dict(table)


class ExportedSettings:
    """A validated export file, with helpers for PyTorch, Lightning, accelerate and HF Trainer."""

    def __init__(self, path: str | os.PathLike, tree: dict[str, Any]) -> None:
        self.path = Path(path)
        self.tree = tree
        p = self.path
        version = _require(p, tree, "gpudash.version", int)
        if version not in SUPPORTED_VERSIONS:
            raise ExportFileError(f"{p}: gpudash.version: this gpudash reads version 1, got {version!r}")
        self.device_type = _require(p, tree, "gpudash.device_type", str, ("cuda", "cpu"))
        self.torch_index = _require(p, tree, "gpudash.torch_index", int, optional=True)
        self.replayed = _require(p, tree, "gpudash.replayed", bool)
        self.dtype = _require(p, tree, "amp.dtype", str, DTYPES)
        self.loss_scaling = _require(p, tree, "amp.loss_scaling", str, LOSS_SCALING)
        self.lightning_precision = _require(p, tree, "amp.lightning_precision", str)
        self.accelerate_mixed_precision = _require(p, tree, "amp.accelerate_mixed_precision", str, ACCELERATE)
        self.tf32 = _require(p, tree, "amp.tf32", bool)
        self.float32_matmul_precision = (
            _require(p, tree, "amp.float32_matmul_precision", str, ("highest", "high", "medium"), optional=True)
            or "highest"
        )
        self.hf_trainer = {k: _require(p, tree, f"amp.hf_trainer.{k}", bool) for k in ("bf16", "fp16", "tf32")}
        self.vendor = _require(p, tree, "gpudash.vendor", str, optional=True)
        if self.vendor == "amd":  # older exports wrote tf32 = true for AMD; transformers refuses it on every ROCm build
            self.hf_trainer["tf32"] = False
        self.batch_size = _require(p, tree, "batch.size", int, optional=True, minimum=1)
        self.gradient_accumulation_steps = _require(
            p, tree, "batch.gradient_accumulation_steps", int, optional=True, minimum=1
        )
        self.num_workers = _require(p, tree, "dataloader.num_workers", int, minimum=0)
        self.pin_memory = _require(p, tree, "dataloader.pin_memory", bool)
        self.persistent_workers = _require(p, tree, "dataloader.persistent_workers", bool, optional=True)
        env = _require(p, tree, "env", dict)
        for name, value in env.items():
            if not isinstance(value, str):
                raise ExportFileError(f"{p}: env.{name}: expected a string, got {_shown(value)}")
        self.env: dict[str, str] = dict(env)
        self.routing: dict[str, str] = _strings(p, tree, "routing")
        self.reasons: dict[str, str] = _strings(p, tree, "reasons")

    def __repr__(self) -> str:
        return (
            f"ExportedSettings({str(self.path)!r}, dtype={self.dtype}, loss_scaling={self.loss_scaling}, "
            f"batch_size={self.batch_size}, accumulation={self.gradient_accumulation_steps})"
        )

    # PyTorch ------------------------------------------------------------------------------------

    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    def autocast(self, device_type: str | None = None):
        """torch.autocast for the exported dtype; a no-op context for float32."""
        if self.dtype == "float32":
            return contextlib.nullcontext()
        import torch

        return torch.autocast(device_type or self.device_type, dtype=self.torch_dtype())

    def grad_scaler(self, device: str | None = None):
        """A torch.amp.GradScaler, enabled only when loss scaling is dynamic (float16). Disabled, as
        `GradScaler(enabled=False)`, its scale() returns the loss and step() just steps the optimizer, so one
        training loop serves every dtype; gpudash.amp.AmpConfig.grad_scaler() answers the same way."""
        import torch

        return torch.amp.GradScaler(device or self.device_type, enabled=self.loss_scaling == "dynamic")

    def apply_torch_backends(self) -> dict[str, Any]:
        """Set TF32 and the float32 matmul precision as exported; returns what it set."""
        import torch

        torch.set_float32_matmul_precision(self.float32_matmul_precision)
        torch.backends.cuda.matmul.allow_tf32 = self.tf32
        torch.backends.cudnn.allow_tf32 = self.tf32
        return {"float32_matmul_precision": self.float32_matmul_precision, "allow_tf32": self.tf32}

    def apply_env(self, overwrite: bool = False) -> dict[str, str]:
        """Set the exported environment variables (call before CUDA/ROCm initialise); returns what it set.

        A variable the user already set to something else is kept unless overwrite=True.
        """
        done = {}
        for name, value in self.env.items():
            if overwrite or os.environ.get(name) in (None, value):
                os.environ[name] = value
                done[name] = value
        return done

    def per_process(self, world_size: int | None = None) -> PerProcess:
        """The batch size and accumulation each of `world_size` data-parallel processes uses (default:
        WORLD_SIZE from the environment, else 1), dividing the accumulation as the module docstring says."""
        n = resolve_world_size(world_size)
        size, steps = self.batch_size, self.gradient_accumulation_steps
        if size is None:
            return PerProcess(n, None, steps, None)
        steps = steps or 1
        if n > 1:
            effective = size * steps
            steps = max(1, math.ceil(steps / n))
            size = min(size, math.ceil(effective / (steps * n)))
        return PerProcess(n, size, steps, size * steps * n)

    def dataloader_kwargs(self, world_size: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"num_workers": self.num_workers, "pin_memory": self.pin_memory}
        share = self.per_process(world_size)
        if share.batch_size is not None:
            out["batch_size"] = share.batch_size
        if self.num_workers > 0 and self.persistent_workers is not None:
            out["persistent_workers"] = self.persistent_workers
        return out

    # Frameworks ---------------------------------------------------------------------------------

    def lightning_kwargs(self, world_size: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"precision": self.lightning_precision}
        steps = self.per_process(world_size).gradient_accumulation_steps
        if steps:
            out["accumulate_grad_batches"] = steps
        return out

    def accelerate_kwargs(self, world_size: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"mixed_precision": self.accelerate_mixed_precision}
        steps = self.per_process(world_size).gradient_accumulation_steps
        if steps:
            out["gradient_accumulation_steps"] = steps
        return out

    def hf_training_args_kwargs(self, world_size: int | None = None) -> dict[str, Any]:
        """TrainingArguments keywords: precision flags, the per-process batch and accumulation, and the dataloader
        settings (HF's dataloader_num_workers, dataloader_pin_memory, dataloader_persistent_workers)."""
        out: dict[str, Any] = dict(self.hf_trainer)
        share = self.per_process(world_size)
        if share.batch_size is not None:
            out["per_device_train_batch_size"] = share.batch_size
        if share.gradient_accumulation_steps is not None:
            out["gradient_accumulation_steps"] = share.gradient_accumulation_steps
        out["dataloader_num_workers"] = self.num_workers
        out["dataloader_pin_memory"] = self.pin_memory
        if self.num_workers > 0 and self.persistent_workers is not None:
            out["dataloader_persistent_workers"] = self.persistent_workers
        if self.device_type == "cpu":
            out["use_cpu"] = True
        return out


def load(path: str | os.PathLike) -> ExportedSettings:
    return ExportedSettings(path, read_tree(path))


__all__ = [
    "WORLD_SIZE_ENV",
    "ExportFileError",
    "ExportedSettings",
    "PerProcess",
    "load",
    "read_tree",
    "resolve_world_size",
]
