"""The system summary the adaptive operations decide from: SYSTEM_CONFIG and print_system_info().

Every field comes from one of gpudash's rules, never from a list of its own:
- architecture, fp8/bf16/fp16 support and matrix units: the reference tables (gpudash.knowledge), which place
  compute capability 9.0 as Hopper; Blackwell is 10.x and 12.x;
- optimal_dtype: gpudash.amp.AmpConfig.auto() on a live machine (the export's AMP rule, with the probe and
  benchmark results gpudash remembers for it); on a replayed machine the same rule
  (gpudash.recommend.choose_dtype) on the snapshot's facts;
- matmul_kernel / fp8_matmul_kernel: what gpudash.ops' dispatcher picks, without and with allow_fp8;
- routing and env: the export's [routing] and [env] rules.
The machine is this one (first GPU, else the CPU) or the snapshot GPUDASH_REPLAY names.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import IO, Any

GIB = 1024**3


@dataclass(frozen=True)
class SystemConfig:
    device: str | None  # torch device ("cuda:0", "cpu"); on a replay, what the GPU would be called
    device_key: str  # gpudash's key ("nvidia:0", "amd:0", "cpu:0")
    device_name: str
    vendor: str  # "nvidia" | "amd" | "cpu"
    architecture: str  # "Hopper", "Blackwell", "CDNA3", "RDNA1", "Zen 4", ...
    compute_capability: str | None
    gfx_target: str | None
    memory_total_bytes: int | None
    has_fp8_support: bool  # fp8 e4m3 native by the spec tables
    fp8_dtype: str | None  # "float8_e4m3fn" or, on gfx942, "float8_e4m3fnuz"
    has_bf16_support: bool  # bf16 native by the spec tables (bf16_cautions says where a fault is reported)
    has_fp16_support: bool
    has_tensor_cores: bool  # any matrix unit: tensor cores, MFMA, WMMA
    matrix_unit: str | None
    optimal_dtype: str  # "bfloat16" | "float16" | "float32": the AMP dtype gpudash's rule picks
    optimal_dtype_reason: str
    matmul_kernel: str  # what gpudash.ops.matmul runs for a 1024-square inference matmul here
    fp8_matmul_kernel: str | None  # the same with allow_fp8=True, when that is an fp8 kernel
    replayed: bool
    source: str  # "live" or "replayed from h100.json"
    routing: dict[str, str] = field(default_factory=dict)  # operation -> device, where routed away
    env: dict[str, str] = field(default_factory=dict)  # the export's [env]
    bf16_cautions: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def memory_gb(self) -> float | None:
        return None if self.memory_total_bytes is None else self.memory_total_bytes / GIB

    @property
    def optimal_torch_dtype(self) -> Any:
        import torch

        return getattr(torch, self.optimal_dtype)

    def lines(self) -> list[str]:
        ident = self.compute_capability and f"compute capability {self.compute_capability}"
        ident = ident or (self.gfx_target and f"gfx target {self.gfx_target}") or self.vendor
        memory = f"{self.memory_gb:.1f} GiB" if self.memory_gb is not None else "unknown"
        yes = {True: "yes", False: "no"}
        out = [
            f"device            {self.device_name} ({self.device_key}, torch {self.device or 'does not see it'}; {self.source})",
            f"architecture      {self.architecture} ({ident})",
            f"memory            {memory}",
            f"fp8               {yes[self.has_fp8_support]}"
            + (f" ({self.fp8_dtype}; used only with allow_fp8=True)" if self.has_fp8_support else ""),
            f"bf16 / fp16       {yes[self.has_bf16_support]} / {yes[self.has_fp16_support]} (spec)"
            + (" - bf16 faults reported, see notes" if self.bf16_cautions else ""),
            f"matrix units      {self.matrix_unit or 'none'}",
            f"optimal dtype     {self.optimal_dtype}: {self.optimal_dtype_reason}",
            f"matmul kernel     {self.matmul_kernel}"
            + (f" (allow_fp8=True: {self.fp8_matmul_kernel})" if self.fp8_matmul_kernel else ""),
        ]
        out += [f"routing           {op} -> {where}" for op, where in self.routing.items()]
        out += [f"env               {name}={value}" for name, value in self.env.items()]
        if self.bf16_cautions:
            out.append(f"note              {self.bf16_cautions}")
        out += [f"note              {note}" for note in self.notes]
        return out


def _optimal_dtype(target: Any) -> tuple[str, str]:
    if target.replayed or target.torch_device is None:
        from gpudash.recommend import choose_dtype

        choice = choose_dtype(target.facts)
        return choice.dtype, choice.reason
    from gpudash.amp import AmpConfig

    config = AmpConfig.auto(target.torch_device)
    return config.dtype_name, config.reasons[-1] if config.reasons else ""


def _kernels(target: Any) -> tuple[str, str | None]:
    from gpudash.ops.dispatching import default_dispatcher, is_fp8
    from gpudash.plugin_manager import plugin_device

    device = plugin_device(target.device, target.machine)
    plain = default_dispatcher(False).choose(device).name
    with_fp8 = default_dispatcher(True)
    chosen = with_fp8.choose(device)
    return plain, chosen.name if is_fp8(chosen) else None


def describe(target: Any) -> SystemConfig:
    from gpudash.runtime import platform, routing

    arch, dev = target.facts.arch, target.device
    dtype, reason = _optimal_dtype(target)
    plain, fp8 = _kernels(target)
    return SystemConfig(
        device=target.torch_device,
        device_key=dev.key,
        device_name=dev.name,
        vendor=dev.vendor,
        architecture=arch.family,
        compute_capability=dev.compute_capability,
        gfx_target=dev.gfx_target,
        memory_total_bytes=dev.memory_total_bytes,
        has_fp8_support=arch.is_native("fp8_e4m3"),
        fp8_dtype=arch.fp8_dtype,
        has_bf16_support=arch.is_native("bf16"),
        has_fp16_support=arch.is_native("fp16"),
        has_tensor_cores=arch.matrix_unit is not None,
        matrix_unit=arch.matrix_unit,
        optimal_dtype=dtype,
        optimal_dtype_reason=reason,
        matmul_kernel=plain,
        fp8_matmul_kernel=fp8,
        replayed=target.replayed,
        source=target.machine.label,
        routing={op: where for op, (where, _) in routing.routes(target).items()},
        env={name: value for name, (value, _) in platform.recommended_env(target).items()},
        bf16_cautions=arch.cautions.get("bf16"),
        notes=tuple(platform.notes(target)),
    )


_configs: dict[tuple[str, str | None], SystemConfig] = {}
_lock = threading.Lock()


def system_config(device: Any = None, *, replay: str | None = None) -> SystemConfig:
    """The summary for `device` (default: the first GPU, else the CPU) of this machine or of `replay`,
    computed once per process."""
    from gpudash.devices import replay_path
    from gpudash.runtime.target import cached

    key = (repr(device), replay_path(replay))
    with _lock:
        found = _configs.get(key)
    if found is None:
        found = describe(cached(device, replay=replay))
        with _lock:
            found = _configs.setdefault(key, found)
    return found


def print_system_info(device: Any = None, *, replay: str | None = None, file: IO[str] | None = None) -> SystemConfig:
    """Print the summary (to stdout unless `file`), and return it."""
    config = system_config(device, replay=replay)
    out = sys.stdout if file is None else file
    for line in config.lines():
        print(line, file=out)
    return config
