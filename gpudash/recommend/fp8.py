"""fp8: is it there, which torch dtype flavour, was it verified, and what TransformerEngine or torchao need.

fp8 training is never switched on by the export: it needs a recipe and a per-model accuracy check. The
[fp8] table says whether the hardware and software could do it and how to opt in.
Sources: PyTorch ScaledBlas.cpp (_scaled_mm; FNUZ on gfx942, OCP elsewhere); TransformerEngine
transformer_engine/pytorch/quantization.py (cc >= 9.0, or 8.9 with CUDA >= 12.1 and cuBLASLt >= 12.1.3; default
recipes) and ROCm/TransformerEngine#359 (the ROCm fork needs gfx94x/gfx95x); accelerate's fp8_config docs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudash.knowledge.amd import parse_gfx
from gpudash.knowledge.nvidia import parse_cc
from gpudash.models import MEASURED, SPEC
from gpudash.recommend.env import rocm_version
from gpudash.recommend.evidence import not_verified
from gpudash.recommend.facts import Facts
from gpudash.recommend.settings import Setting


def _version(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def transformer_engine(facts: Facts) -> tuple[bool, str]:
    """(usable, what it needs here)."""
    vendor = facts.device.vendor
    if vendor == "nvidia":
        cc = parse_cc(facts.device.compute_capability)
        if cc is None:
            return False, "unknown compute capability; TransformerEngine fp8 needs cc >= 8.9"
        label = f"cc {cc[0]}.{cc[1]}"
        if cc >= (12, 0):
            return True, f"supported on {label}; default recipe Float8CurrentScaling (MXFP8 not on 12.x yet)"
        if cc >= (10, 0):
            return True, f"supported on {label}; default recipe MXFP8BlockScaling"
        if cc >= (9, 0):
            return True, f"supported on {label}; default recipe DelayedScaling (not under torch.compile)"
        if cc == (8, 9):
            cuda = _version(facts.runtime.cuda)
            if cuda is not None and cuda < (12, 1):
                return (
                    False,
                    f"Ada needs CUDA >= 12.1 and cuBLASLt >= 12.1.3; this runtime has CUDA {facts.runtime.cuda}",
                )
            have = f"CUDA {facts.runtime.cuda}" if facts.runtime.cuda else "CUDA version unknown"
            return True, f"supported on Ada with CUDA >= 12.1 and cuBLASLt >= 12.1.3 ({have})"
        return False, f"not supported on {label}: TransformerEngine fp8 needs compute capability 8.9 or newer"
    if vendor == "amd":
        gfx = parse_gfx(facts.device.gfx_target) or "?"
        if gfx.startswith(("gfx94", "gfx95")):
            return True, f"ROCm TransformerEngine fork supports {gfx} (it requires gfx94x or gfx95x)"
        return False, f"not supported on {gfx}: the ROCm TransformerEngine fork requires gfx94x or gfx95x"
    return False, "not supported: TransformerEngine fp8 needs an NVIDIA GPU (cc >= 8.9) or AMD gfx94x/gfx95x"


OCP_FP8_MIN_ROCM = (6, 5)  # _scaled_mm with the OCP fp8 dtypes on gfx950/gfx120x (PyTorch ScaledBlas.cpp)


@dataclass(frozen=True)
class Fp8Choice:
    """What gpudash decides about fp8 on one device (training never switches it on by itself)."""

    available: bool  # native by the spec tables
    level: str  # "native" | "emulated" | "absent"
    verified: bool  # the probe verified fp8 e4m3 here
    status: str  # the probe's word on it, or why nothing was verified
    provenance: str
    kernels: bool  # a scaled fp8 matmul (torch._scaled_mm) may run here, for inference (no autograd through it)
    kernel_reason: str


def _status(facts: Facts) -> tuple[bool, str, str]:
    """(verified, status text, provenance) from the probe's fp8_e4m3 result."""
    result = facts.probe_result("fp8_e4m3")
    if result is None or result.verified is None:
        return False, not_verified(facts), SPEC
    if result.verified is False:
        return False, f"failed: {result.failure_reason or result.verdict or 'wrong results'}", MEASURED
    if result.verdict == "slow_reference":
        return True, "verified, but through a slow reference path", MEASURED
    return True, "verified by the probe", MEASURED


def fp8_choice(facts: Facts) -> Fp8Choice:
    arch = facts.arch
    native = arch.is_native("fp8_e4m3")
    level = arch.precisions.get("fp8_e4m3", "absent")
    verified, status, prov = _status(facts)
    result = facts.probe_result("fp8_e4m3")
    rocm = rocm_version(facts) if facts.device.vendor == "amd" else None
    if not native or facts.is_cpu or not arch.fp8_dtype:
        kernels, why = False, f"fp8 is {level} on {arch.family}: no fp8 matrix hardware for _scaled_mm"
    elif result is not None and (result.verified is False or result.verdict == "slow_reference"):
        kernels, why = False, f"the probe found fp8 unusable here ({status})"
    elif arch.fp8_dtype == "float8_e4m3fn" and rocm is not None and rocm < OCP_FP8_MIN_ROCM:
        kernels, why = (
            False,
            (
                f"_scaled_mm with the OCP fp8 dtypes needs ROCm >= {OCP_FP8_MIN_ROCM[0]}.{OCP_FP8_MIN_ROCM[1]}, "
                f"this runtime has ROCm {rocm[0]}.{rocm[1]}"
            ),
        )
    else:
        kernels, why = True, f"fp8 native on {arch.family} ({arch.fp8_dtype}); {status}"
    return Fp8Choice(native, level, verified, status, prov, kernels, why)


def torchao(facts: Facts, choice: Fp8Choice) -> tuple[bool, str]:
    """torchao's float8 training is torch._scaled_mm underneath: usable exactly where gpudash's own fp8 kernel
    gate (`choice.kernels`, what the adaptive kernels ask) lets _scaled_mm run."""
    if choice.kernels:
        return True, (
            "torchao.float8.convert_to_float8_training runs on torch._scaled_mm here; "
            "compile the model (torch.compile) for a speedup"
        )
    if facts.is_cpu:
        return False, "not useful: a CPU has no fp8 hardware, so torch._scaled_mm gains nothing over bf16 or fp32"
    if choice.available:
        return False, f"not usable here: torchao float8 training runs on torch._scaled_mm, and {choice.kernel_reason}"
    return False, (
        "not usable: torchao float8 training needs torch._scaled_mm hardware (NVIDIA cc >= 8.9, AMD MI300+/RDNA4)"
    )


def transformer_engine_usable(facts: Facts, choice: Fp8Choice) -> tuple[bool, str]:
    """TransformerEngine's own requirements, and its fp8 GEMMs need what the kernel gate needs (the ROCm fork on
    gfx950 needs the OCP fp8 of ROCm >= 6.5 as _scaled_mm does): one answer with the kernels."""
    ok, why = transformer_engine(facts)
    if ok and not choice.kernels:
        return False, f"not usable here: {choice.kernel_reason} (TransformerEngine would otherwise support it: {why})"
    return ok, why


def fp8_settings(facts: Facts, choice: Fp8Choice) -> dict[str, Setting]:
    """The [fp8] table for the fp8 decision (recommend.decisions.fp8)."""
    arch = facts.arch
    native, level, verified, status, prov = (
        choice.available,
        choice.level,
        choice.verified,
        choice.status,
        choice.provenance,
    )
    te_ok, te_why = transformer_engine_usable(facts, choice)
    ao_ok, ao_why = torchao(facts, choice)
    out = {
        "available": Setting(
            native,
            f"fp8 is {level} on {arch.family} by the spec tables"
            + ("" if native or level == "absent" else " (runs, but not on fp8 hardware)"),
            SPEC,
        ),
        "verified": Setting(verified, status, prov),
        "enabled": Setting(
            False,
            "fp8 training is opt-in: it needs a scaling recipe and an accuracy check "
            "per model; the AMP dtype above is the safe default",
            SPEC,
        ),
        "transformer_engine": Setting(te_ok, te_why, SPEC),
        "torchao": Setting(ao_ok, ao_why, SPEC),
    }
    if arch.fp8_dtype:
        flavour = "fnuz" if "fnuz" in arch.fp8_dtype else "ocp"
        out["torch_dtype"] = Setting(arch.fp8_dtype, "torch dtype for e4m3 here (forward pass)", SPEC)
        if arch.fp8_e5m2_dtype:
            out["torch_dtype_e5m2"] = Setting(arch.fp8_e5m2_dtype, "torch dtype for e5m2 here (gradients)", SPEC)
        out["flavour"] = Setting(
            flavour,
            "FNUZ variants (no negative zero, max 240 for e4m3) on gfx942"
            if flavour == "fnuz"
            else "OCP variants (float8_e4m3fn, max 448)",
            SPEC,
        )
    if native and (te_ok or ao_ok):
        backend = "TE" if te_ok else "AO"
        out["accelerate_backend"] = Setting(
            backend, f"accelerate mixed_precision='fp8' with fp8_config.backend={backend} to opt in", SPEC
        )
        out["accelerate_fp8_format"] = Setting("HYBRID", "e4m3 forward, e5m2 gradients (accelerate fp8_config)", SPEC)
        if te_ok:
            out["lightning_precision"] = Setting(
                "transformer-engine", "Lightning precision string to opt in to fp8 via TransformerEngine", SPEC
            )
    return out
