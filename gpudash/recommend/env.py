"""Environment rules: allocator settings, ROCm variables, and device routing advice.

- NVIDIA: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, so the caching allocator grows segments instead
  of fragmenting when shapes vary. On ROCm, expandable segments arrived only with torch 2.11 / ROCm 7 and
  hang and crash reports are open (pytorch#192259, #187343), so it is left unset there.
- ROCm: TORCH_BLAS_PREFER_HIPBLASLT=0 where PyTorch does not support hipBLASLt on the gfx target for the
  ROCm version (PyTorch CUDAHooks.cpp getHipblasltSupportedArchs; torch would fall back to hipBLAS with a warning anyway: the
  RX 5600 XT report's gfx1010 case). Anything else (TunableOp, hipBLASLt on, AOTriton) comes from the check
  results' `env`, which win over these spec rules: a failing check beats a warning beats a pass.
- Routing: FFT to the CPU on RDNA1 (an RX 5600 XT training report saw system hangs in FFT) or where a
  check's details carry {"routing": {"fft": "cpu"}}.
"""

from __future__ import annotations

import re

from gpudash.knowledge.amd import parse_gfx
from gpudash.models import SPEC
from gpudash.recommend.evidence import check_provenance, describe_check
from gpudash.recommend.facts import Facts
from gpudash.recommend.settings import Setting

# PyTorch's hipBLASLt-supported gfx targets by the ROCm version that added them (PyTorch aten/src/ATen/cuda/detail/CUDAHooks.cpp).
HIPBLASLT_SUPPORTED = (
    ((0, 0), ("gfx90a", "gfx942")),
    ((6, 3), ("gfx1100", "gfx1101", "gfx1103", "gfx1200", "gfx1201", "gfx908")),
    ((7, 0), ("gfx950", "gfx1150", "gfx1151")),
    ((7, 2), ("gfx1250",)),
)
STATUS_WEIGHT = {"fail": 3, "warn": 2, "pass": 1}
ROUTING_FAMILIES = {
    "RDNA1": {"fft": "an RX 5600 XT training report (ROCm 6.2) routed FFT to the CPU on RDNA1 for stability"}
}


BACKEND_SWITCH = (
    'TORCH_BLAS_PREFER_HIPBLASLT=0 (or torch.backends.cuda.preferred_blas_library("hipblas")) is what makes torch '
    "use hipBLAS instead of hipBLASLt"
)

# Said wherever gpudash advises on the hipBLASLt fallback, because the summary's "fix" is widely copied.
HIPBLASLT_SEED_NOTE = (
    "ROCBLAS_LAYER=1 and HIPBLASLT_LOG_LEVEL=0, the RX 5600 XT summary's fix for the hipBLASLt warning, only turn on "
    "rocBLAS trace logging and keep hipBLASLt logging off (its default); " + BACKEND_SWITCH
)


def rocm_version(facts: Facts) -> tuple[int, int] | None:
    for text in (facts.runtime.hip, (facts.runtime.torch or "").partition("+rocm")[2] or None):
        m = re.match(r"\s*(\d+)\.(\d+)", text or "")
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def hipblaslt_supported(gfx: str, version: tuple[int, int] | None) -> bool:
    """Supported at this ROCm version; with the version unknown, at any version."""
    return any(gfx in targets for since, targets in HIPBLASLT_SUPPORTED if version is None or version >= since)


def _spec_env(facts: Facts) -> dict[str, Setting]:
    vendor = facts.device.vendor
    if vendor == "nvidia":
        return {
            "PYTORCH_CUDA_ALLOC_CONF": Setting(
                "expandable_segments:True",
                "the caching allocator grows segments instead of fragmenting when shapes vary (fewer OOMs at a "
                "given batch size)",
                SPEC,
            )
        }
    if vendor != "amd":
        return {}
    gfx = parse_gfx(facts.device.gfx_target)
    version = rocm_version(facts)
    if gfx and not hipblaslt_supported(gfx, version):
        rocm = f"ROCm {version[0]}.{version[1]}" if version else "any ROCm version"
        return {
            "TORCH_BLAS_PREFER_HIPBLASLT": Setting(
                "0",
                f"PyTorch does not support hipBLASLt on {gfx} with {rocm}: use hipBLAS (torch would fall back "
                f"with a warning). {HIPBLASLT_SEED_NOTE}",
                SPEC,
            )
        }
    return {}


def _check_env(facts: Facts) -> dict[str, tuple[int, Setting]]:
    chosen: dict[str, tuple[int, Setting]] = {}
    for check in facts.device_checks():
        weight = STATUS_WEIGHT.get(check.get("status", ""), 0)
        env = check.get("env")
        if not isinstance(env, dict):
            env = {}
        if not weight:
            continue
        for name, value in env.items():
            if name in chosen and chosen[name][0] >= weight:
                continue
            advice = check.get("remediation") or ""
            reason = describe_check(check) + (f"; {advice}" if advice else "")
            chosen[name] = (weight, Setting(str(value), reason, check_provenance(facts, check)))
    return chosen


def env_settings(facts: Facts) -> dict[str, Setting]:
    out = _spec_env(facts)
    for name, (_, setting) in _check_env(facts).items():
        out[name] = setting
    return out


def env_notes(facts: Facts) -> list[str]:
    if facts.device.vendor == "amd" and "PYTORCH_HIP_ALLOC_CONF" not in env_settings(facts):
        return [
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True left unset: ROCm support is recent "
            "(torch 2.11 / ROCm 7) with open hang and crash reports (pytorch#192259, #187343)"
        ]
    return []


def routing_settings(facts: Facts) -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for op, why in ROUTING_FAMILIES.get(facts.arch.family, {}).items():
        out[op] = Setting("cpu", why, SPEC)
    for check in facts.device_checks():
        details = check.get("details")
        routing = details.get("routing") if isinstance(details, dict) else None
        if STATUS_WEIGHT.get(check.get("status", ""), 0) >= 2 and isinstance(routing, dict):
            for op, device in routing.items():
                out[str(op)] = Setting(str(device), describe_check(check), check_provenance(facts, check))
    return out
