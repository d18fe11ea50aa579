"""One decision per question, asked by every path that needs the answer.

    amp_dtype(facts)          the autocast dtype and its loss scaling: `gpudash export`'s [amp], AmpConfig.auto()
    tf32(facts)               TF32 for torch's fp32 matmuls, and HF TrainingArguments' tf32 flag
    fp8(facts)                is fp8 there, verified, and may a scaled fp8 matmul kernel run
    kernel_precision(facts)   the precision a matmul kernel may compute a training step in (the adaptive dispatcher)
    precision_advice(facts)   what a check tells the user to train in (the ROCm checks)
    bf16_support(facts)       does the device support bf16 at all: spec, and verified where probed

Every answer about a training precision derives from `amp_dtype`, so the export, gpudash.amp, the dispatcher and
the checks cannot drift apart; tests/test_agreement.py holds them to one answer on every example machine. The
rules themselves live beside their settings (recommend/amp.py, recommend/fp8.py, recommend/evidence.py); the
facts come from recommend/machine_facts.py (discovery plus what probe, bench and export remembered).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.recommend.amp import AmpChoice, choose_dtype, hf_tf32_setting, tf32_setting
from gpudash.recommend.evidence import Verdict, support
from gpudash.recommend.facts import Facts
from gpudash.recommend.fp8 import Fp8Choice, fp8_choice
from gpudash.recommend.settings import Setting

SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
ADVICE = {
    "bfloat16": "Train with bf16 autocast (no loss scaling)",
    "float16": "Train with fp16 autocast and a GradScaler (dynamic loss scaling)",
    "float32": "Train in fp32 (no autocast)",
}


@dataclass(frozen=True)
class Tf32Choice:
    torch: Setting  # torch.backends.cuda.matmul.allow_tf32 / set_float32_matmul_precision("high")
    hf: Setting  # HF TrainingArguments(tf32=...): never True where transformers would refuse it


@dataclass(frozen=True)
class KernelChoice:
    precision: str  # "bf16" | "fp16" | "fp32": what a matmul of a training step may compute in
    reason: str
    fp8: bool  # a scaled fp8 kernel may run for inference (no backward pass through it)
    fp8_reason: str


@dataclass(frozen=True)
class Advice:
    dtype: str  # the autocast dtype to train in: "bfloat16" | "float16" | "float32"
    text: str  # one sentence for a check's remediation, with gpudash's reason
    provenance: str


def amp_dtype(facts: Facts) -> AmpChoice:
    """The autocast dtype (bfloat16, float16 or float32), why, and `loss_scaling` ("dynamic" for float16)."""
    return choose_dtype(facts)


def tf32(facts: Facts) -> Tf32Choice:
    torch_setting = tf32_setting(facts)
    return Tf32Choice(torch_setting, hf_tf32_setting(facts, torch_setting))


def fp8(facts: Facts) -> Fp8Choice:
    return fp8_choice(facts)


def kernel_precision(facts: Facts) -> KernelChoice:
    """The adaptive matmul's precision for a training step is the AMP dtype: a kernel computing in another
    precision than the one training autocasts to would be a second answer to the same question."""
    choice = amp_dtype(facts)
    fp8_here = fp8(facts)
    return KernelChoice(SHORT[choice.dtype], choice.reason, fp8_here.kernels, fp8_here.kernel_reason)


def precision_advice(facts: Facts) -> Advice:
    choice = amp_dtype(facts)
    return Advice(choice.dtype, f"{ADVICE[choice.dtype]}: {choice.reason}.", choice.provenance)


def bf16_support(facts: Facts) -> Verdict:
    """Whether the device supports bf16 (native by the tables, and not found broken where a probe or check
    looked). Whether training should *use* it is amp_dtype's question: a CPU can support bf16 and still train
    in fp32 until bf16 is measured faster, and RDNA3 supports it under a caution."""
    return support(facts, "bf16")


__all__ = [
    "ADVICE",
    "Advice",
    "AmpChoice",
    "Fp8Choice",
    "KernelChoice",
    "Tf32Choice",
    "amp_dtype",
    "bf16_support",
    "fp8",
    "kernel_precision",
    "precision_advice",
    "tf32",
]
