"""What the run-time helpers say about the platform: its name, the device, and the environment advice.

The environment advice is the export's [env] rule (gpudash.recommend.env.env_settings). About the hipBLASLt
warning on GPUs hipBLASLt does not support (RDNA1, for one): the variable that changes the GEMM backend is
TORCH_BLAS_PREFER_HIPBLASLT=0 (torch then uses hipBLAS from the start; or call
torch.backends.cuda.preferred_blas_library("hipblas")). The "fix" an RX 5600 XT training summary gives,
ROCBLAS_LAYER=1 and HIPBLASLT_LOG_LEVEL=0, changes no backend: ROCBLAS_LAYER is rocBLAS's logging bit mask, 1
turning on trace logging (a line for every rocBLAS call, which slows training), and HIPBLASLT_LOG_LEVEL=0 is
hipBLASLt's default, logging off. `seed_env_notes()` says so whenever either is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from gpudash.recommend.env import BACKEND_SWITCH, HIPBLASLT_SEED_NOTE
from gpudash.runtime.target import Target, cached

LOGGING_ONLY = {
    "ROCBLAS_LAYER": (
        "ROCBLAS_LAYER is rocBLAS's logging bit mask (1 trace, 2 bench, 4 profile, 8 internal API); any non-zero "
        "value turns logging on and slows every BLAS call; it selects no GEMM backend "
        "(https://rocm.docs.amd.com/projects/rocBLAS/en/latest/reference/logging.html)"
    ),
    "HIPBLASLT_LOG_LEVEL": (
        "HIPBLASLT_LOG_LEVEL sets hipBLASLt's log verbosity (0 off, the default; 1 error ... 5 API trace); it selects "
        "no GEMM backend (https://rocm.docs.amd.com/projects/hipBLASLt/en/latest/reference/env-variables.html)"
    ),
}


def seed_env_notes(environ: Mapping[str, str] | None = None) -> list[str]:
    """One note for each of the summary's logging variables set in the environment: what it really does."""
    env = os.environ if environ is None else environ
    return [
        f"{name}={env[name]} is set: {what}; {BACKEND_SWITCH}" for name, what in LOGGING_ONLY.items() if name in env
    ]


def platform_name(target: Target) -> str:
    vendor = target.device.vendor
    name = {"nvidia": "NVIDIA CUDA", "amd": "AMD ROCm/HIP", "cpu": "CPU"}.get(vendor, vendor)
    return f"{name} ({target.machine.label})" if target.replayed else name


def recommended_env(target: Target) -> dict[str, tuple[str, str]]:
    """name -> (value, why): the export's [env] for this device (spec rules, and check results if given)."""
    from gpudash.recommend import env

    return {name: (str(s.value), s.reason) for name, s in env.env_settings(target.facts).items()}


def notes(target: Target) -> list[str]:
    from gpudash.recommend import env

    out = list(env.env_notes(target.facts))
    if target.device.vendor != "amd":
        return out
    set_here = seed_env_notes()
    if set_here:
        out += set_here
    elif "TORCH_BLAS_PREFER_HIPBLASLT" in env.env_settings(target.facts):
        out.append(HIPBLASLT_SEED_NOTE)
    return out


def platform_info(device: Any = None, *, replay: str | None = None) -> dict[str, Any]:
    target = cached(device, replay=replay)
    dev = target.device
    return {
        "platform": platform_name(target),
        "device": target.torch_device,
        "device_key": dev.key,
        "name": dev.name,
        "architecture": target.facts.arch.family,
        "compute_capability": dev.compute_capability,
        "gfx_target": dev.gfx_target,
        "memory_total_bytes": dev.memory_total_bytes,
        "replayed": target.replayed,
        "source": target.machine.label,
    }
