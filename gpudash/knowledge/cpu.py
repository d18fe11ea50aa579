"""CPU microarchitecture name and per-precision support from ISA features.

Features use torch.cpu.get_capabilities() key names (x86: "avx2", "fma3", "avx512_f", "avx512_bf16",
"avx512_fp16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_fp16"; ARM: "bf16", "i8mm",
"asimddp", "fphp"); /proc/cpuinfo flag spellings (avx512f, avx512_bf16, amx_bf16, ...) are accepted too.
Sources: torch.cpu.get_capabilities() for the ISA flags (SOURCE below); CPU fp8: torch's `_scaled_mm` runs
e4m3fn/e5m2 without fp8 hardware (torch 2.13 on a Zen 4 VM measured 140-165 GFLOPS with B column-major, below
fp32: emulated); AMX rates: Intel's AMX overview (2048 int8 / 1024 bf16 operations per cycle per core).
Microarchitecture from (vendor, family, model) as in the Intel SDM / AMD family numbering:
  Intel family 6: 85 Skylake-SP / Cascade Lake / Cooper Lake (told apart by VNNI and AVX512-BF16),
    106/108 Ice Lake-SP, 143 Sapphire Rapids, 207 Emerald Rapids, 173/174 Granite Rapids; any other model with
    AMX-BF16 "Sapphire Rapids or later (AMX)" (AMX arrived with Sapphire Rapids; VMs may show another model).
  AMD family 0x17: model < 0x30 "Zen/Zen+" (the two share model ranges), otherwise "Zen 2";
    family 0x19: models 0x00-0x0f and 0x20-0x5f "Zen 3", 0x10-0x1f and 0x60-0xaf "Zen 4"; family 0x1a "Zen 5".
  Anything else -> "CPU".
"""

from __future__ import annotations

from typing import Any

from gpudash.knowledge.levels import ABSENT, EMULATED, NATIVE, ArchInfo, DeviceFacts, support

SOURCE = (
    "https://github.com/pytorch/pytorch/blob/main/torch/cpu/__init__.py (get_capabilities ISA flags); "
    "https://www.intel.com/content/www/us/en/products/docs/accelerator-engines/advanced-matrix-extensions/overview.html"
)

# /proc/cpuinfo spellings -> torch.cpu.get_capabilities() spellings.
_ALIASES = {"avx512f": "avx512_f", "fma": "fma3", "avxvnni": "avx_vnni", "avx512vnni": "avx512_vnni"}

_INTEL_FAMILY6 = {
    106: "Ice Lake-SP",
    108: "Ice Lake-SP",
    143: "Sapphire Rapids",
    207: "Emerald Rapids",
    173: "Granite Rapids",
    174: "Granite Rapids",
}


def features(device: DeviceFacts) -> frozenset[str]:
    """The device's ISA flags, lower-cased, in torch's spelling."""
    raw = getattr(device, "cpu_features", None) or []
    out = set()
    for f in raw:
        if isinstance(f, str):
            name = f.strip().lower()
            out.add(_ALIASES.get(name, name))
    return frozenset(out)


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        for base in (10, 0):  # "25", then "0x19"
            try:
                return int(text, base)
            except ValueError:
                continue
    return None


def vendor_of(device: DeviceFacts) -> str:
    """'intel', 'amd', 'arm' or '' from extra['cpu_vendor'] ('GenuineIntel', 'AuthenticAMD', 'ARM', ...)."""
    extra = getattr(device, "extra", None) or {}
    raw = str(extra.get("cpu_vendor") or "").lower()
    if "intel" in raw:
        return "intel"
    if "amd" in raw:  # "authenticamd", "amd"; "ARM" has no "amd"
        return "amd"
    if "arm" in raw or "aarch64" in raw or "apple" in raw:
        return "arm"
    return ""


def microarch(device: DeviceFacts) -> str:
    """Microarchitecture name, or 'CPU' when the vendor/family/model triple is not one we know."""
    extra = getattr(device, "extra", None) or {}
    vendor = vendor_of(device)
    family = _as_int(extra.get("cpu_family"))
    model = _as_int(extra.get("cpu_model"))
    if family is None or model is None:
        return "CPU"
    if vendor == "intel" and family == 6:
        feats = features(device)
        if model == 85:
            if "avx512_bf16" in feats:
                return "Cooper Lake"
            return "Cascade Lake" if "avx512_vnni" in feats else "Skylake-SP"
        # A hypervisor may show a model number of another part (a KVM guest of a Sapphire Rapids host reported
        # model 167, a client part's); AMX exists only from Sapphire Rapids on, so the flags still place it.
        fallback = "Sapphire Rapids or later (AMX)" if "amx_bf16" in feats else "CPU"
        return _INTEL_FAMILY6.get(model, fallback)
    if vendor == "amd":
        if family == 0x17:
            return "Zen/Zen+" if model < 0x30 else "Zen 2"
        if family == 0x19:
            if 0x10 <= model <= 0x1F or 0x60 <= model <= 0xAF:
                return "Zen 4"
            if model <= 0x0F or 0x20 <= model <= 0x5F:
                return "Zen 3"
            return "CPU"
        if family == 0x1A:
            return "Zen 5"
    return "CPU"


def cpu_arch(device: DeviceFacts) -> ArchInfo:
    """Microarchitecture and per-precision support from the ISA flags. Never raises."""
    try:
        feats = features(device)
        arm = vendor_of(device) == "arm"
        bf16 = bool({"avx512_bf16", "amx_bf16"} & feats) or (arm and "bf16" in feats)
        fp16 = bool({"avx512_fp16", "amx_fp16"} & feats) or (arm and "fphp" in feats)
        int8 = bool({"avx512_vnni", "avx_vnni", "amx_int8"} & feats) or (arm and bool({"asimddp", "i8mm"} & feats))
        notes = ["fp8 has no CPU hardware: torch's _scaled_mm converts in software (correct, not faster than fp32)"]
        if not bf16:
            notes.append("bf16 emulated: no AVX512-BF16/AMX-BF16, converted to fp32")
        if not fp16:
            notes.append("fp16 emulated: no AVX512-FP16/AMX-FP16, converted to fp32")
        precisions = support(
            fp64=NATIVE,
            fp32=NATIVE,
            tf32=ABSENT,
            fp16=NATIVE if fp16 else EMULATED,
            bf16=NATIVE if bf16 else EMULATED,
            fp8_e4m3=EMULATED,
            fp8_e5m2=EMULATED,
            int8=NATIVE if int8 else EMULATED,
            fp4=ABSENT,
        )
        return ArchInfo(microarch(device), precisions, "float8_e4m3fn", "float8_e5m2", tuple(notes), SOURCE)
    except Exception as exc:
        return ArchInfo(
            "CPU", support(fp64=NATIVE, fp32=NATIVE), None, None, (f"CPU feature lookup failed: {exc}",), SOURCE
        )
