"""AMP rules: the autocast dtype, loss scaling, TF32, and the matching Lightning / accelerate / HF values.

GPU: bf16 where it is native, not found broken and not flagged; else fp16 with dynamic loss scaling where
fp16 has matrix units (the tables' ArchInfo.matrix_unit: tensor cores from Volta except TU116/TU117, MFMA on
CDNA, WMMA on RDNA3+); else fp32. Consumer Pascal runs fp16 at 1/64 of fp32, RDNA1/RDNA2 and GTX 16xx have no
matrix units, so mixed precision does not pay there; on RDNA1 an RX 5600 XT training report (ROCm 6.2) also
found it unstable. A benchmark can overrule "does not pay": packed fp16 measured at >= 1.5x fp32 switches a
part without matrix units to fp16.
Cautions: where the tables carry a caution for bf16 (RDNA3, RDNA3.5: reported software faults, cited in
ArchInfo.cautions), a spec-only answer does not rely on bf16 and prefers fp16 on the WMMA units; a live probe
that verified bf16 correct AND a measurement showing it faster than fp32 here overrides the caution, and the
reason says so.
CPU: bf16 only where it is native AND measured faster than fp32 here. Without a measurement (--bench none,
a replayed machine) the CPU stays fp32 and the reason says how to measure; fp16 is never used on a CPU
(accelerate refuses it there and Lightning swaps "16-mixed" for bf16).
Formats: Lightning's precision strings (lightning/fabric/plugins/precision/precision.py), accelerate's
PrecisionType (accelerate/utils/dataclasses.py), HF TrainingArguments' bf16/fp16/tf32 flags. HF's tf32=True
is refused by transformers whenever torch.version.cuda is None (every ROCm build): TrainingArguments.__post_init__
raises unless utils/import_utils.py is_torch_tf32_available() holds, and that needs a CUDA build and cc >= 8.0
(https://github.com/huggingface/transformers/blob/main/src/transformers/utils/import_utils.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.models import MEASURED, SPEC
from gpudash.recommend.evidence import Verdict, arch_notes_about, describe_check, judge, not_verified
from gpudash.recommend.facts import Facts
from gpudash.recommend.settings import Setting

BF16, FP16, FP32 = "bfloat16", "float16", "float32"
# The framework spellings; gpudash.amp (the runtime AmpConfig) uses these same tables, so both always agree.
LIGHTNING_PRECISION = {BF16: "bf16-mixed", FP16: "16-mixed", FP32: "32-true"}
ACCELERATE_MIXED_PRECISION = {BF16: "bf16", FP16: "fp16", FP32: "no"}
SHORT = {BF16: "bf16", FP16: "fp16", FP32: "fp32"}

MIN_MEASURED_GAIN = 1.1  # "measured faster": at least 10 % over fp32, with the measurement's whole spread
MIN_PACKED_FP16_SPEEDUP = 1.5  # packed fp16 without matrix units must clearly pay for autocast's casts

# Families where a user report found mixed precision unstable.
AMP_UNSTABLE = {"RDNA1": "an RX 5600 XT training report (ROCm 6.2) found mixed precision unstable on RDNA1"}

# How the reasons name the tables' matrix units (ArchInfo.matrix_unit).
MATRIX_UNIT_WORDS = {"tensor cores": "tensor cores", "MFMA": "MFMA matrix cores", "WMMA": "WMMA matrix instructions"}
TRANSFORMERS_TF32 = "https://github.com/huggingface/transformers/blob/main/src/transformers/utils/import_utils.py"


@dataclass(frozen=True)
class AmpChoice:
    dtype: str
    reason: str
    provenance: str

    @property
    def loss_scaling(self) -> str:
        """Loss scaling for the dtype: "dynamic" (torch.amp.GradScaler) for float16, whose small gradients
        underflow; "none" otherwise."""
        return "dynamic" if self.dtype == FP16 else "none"


def matrix_units(facts: Facts) -> str | None:
    """The matrix units of the device as the reasons name them, or None where it has none (GTX 16xx, RDNA1/2,
    Pascal, every CPU). From the tables' ArchInfo.matrix_unit, which tells TU116/TU117 apart inside cc 7.5."""
    if facts.is_cpu or facts.arch.matrix_unit is None:
        return None
    return MATRIX_UNIT_WORDS.get(facts.arch.matrix_unit, facts.arch.matrix_unit)


def choose_dtype(facts: Facts) -> AmpChoice:
    if facts.is_cpu:
        return _cpu_dtype(facts)
    if facts.device.vendor not in ("nvidia", "amd") or facts.arch.family == "unknown":
        return AmpChoice(FP32, f"{facts.arch.family} device: no precision facts to justify mixed precision", SPEC)
    bf16 = judge(facts, "bf16")
    if bf16.ok:
        caution = facts.arch.cautions.get("bf16")
        if caution:
            return _cautious_bf16(facts, bf16, caution)
        notes = arch_notes_about(facts, "bf16") if bf16.provenance == SPEC else []
        notes += _warning_checks(facts)
        extra = f"; note: {'; '.join(notes)}" if notes else ""
        return AmpChoice(BF16, f"{bf16.reason}: bfloat16 autocast, no loss scaling{extra}", bf16.provenance)
    family = facts.arch.family
    if family in AMP_UNSTABLE:
        return AmpChoice(FP32, f"{bf16.reason}; no matrix cores and {AMP_UNSTABLE[family]}: full fp32", SPEC)
    return _fp16_or_fp32(facts, bf16)


def _warning_checks(facts: Facts) -> list[str]:
    return [describe_check(c) for c in facts.checks_flagging("bf16", ("warn",))]


def verified_and_faster(facts: Facts, precision: str) -> tuple[float, str] | None:
    """(speed over fp32, which measurement) when a live probe verified `precision` correct here and a
    measurement found it at least MIN_MEASURED_GAIN x fp32; None otherwise."""
    result = facts.probe_result(precision)
    if result is None or result.verdict != "verified":
        return None
    faster = facts.compare_speed(precision, MIN_MEASURED_GAIN)
    if faster.answer is not True or faster.figure is None:
        return None
    return faster.figure.value, faster.figure.describe() + (f"; {faster.note}" if faster.note else "")


def _cautious_bf16(facts: Facts, bf16: Verdict, caution: str) -> AmpChoice:
    """bf16 is native but the tables caution against trusting it from the spec alone."""
    family = facts.arch.family
    live = verified_and_faster(facts, "bf16")
    if live is not None:
        extra = "".join(f"; note: {n}" for n in _warning_checks(facts))
        return AmpChoice(
            BF16,
            f"bf16 native on {family}, verified correct by the probe and measured {live[0]:.2f}x fp32 here "
            f"({live[1]}): this live result overrides the tables' caution ({caution}): "
            f"bfloat16 autocast, no loss scaling{extra}",
            MEASURED,
        )
    result = facts.probe_result("bf16")
    speed = facts.speed("bf16")
    if result is not None and result.verdict == "verified":
        status = (
            f"the probe verified bf16 correct here but it measured only {speed[0]:.2f}x fp32 ({speed[1]})"
            if speed is not None
            else "the probe verified bf16 correct here, but its speed was not measured (run `gpudash bench`)"
        )
    else:
        status = f"bf16 {not_verified(facts)}"
    why = f"caution from the tables: {caution}; {status}"
    fp16 = judge(facts, "fp16")
    units = matrix_units(facts)
    prov = MEASURED if MEASURED in (bf16.provenance, fp16.provenance) else SPEC
    if fp16.ok and units:
        return AmpChoice(
            FP16,
            f"{why}; fp16 runs on {units} ({_verified_word(facts, fp16)}): float16 autocast with dynamic loss scaling",
            prov,
        )
    other = fp16.reason if not fp16.ok else "fp16 has no matrix units here"
    return AmpChoice(FP32, f"{why}; {other}: full fp32", prov)


def _fp16_or_fp32(facts: Facts, bf16: Verdict) -> AmpChoice:
    fp16 = judge(facts, "fp16")
    if not fp16.ok:
        prov = MEASURED if MEASURED in (bf16.provenance, fp16.provenance) else SPEC
        return AmpChoice(FP32, f"{bf16.reason}; {fp16.reason}: full fp32", prov)
    units = matrix_units(facts)
    if units:  # measured if a measurement ruled bf16 out or verified fp16
        prov = MEASURED if MEASURED in (bf16.provenance, fp16.provenance) else SPEC
        return AmpChoice(
            FP16,
            f"{bf16.reason}; fp16 runs on {units} ({_verified_word(facts, fp16)}): "
            "float16 autocast with dynamic loss scaling",
            prov,
        )
    speed = facts.speedup("fp16")
    if speed is not None and facts.compare_speed("fp16", MIN_PACKED_FP16_SPEEDUP).answer is True:
        return AmpChoice(
            FP16,
            f"{bf16.reason}; no fp16 matrix units, but fp16 measured {speed:.1f}x fp32 here: "
            "float16 autocast with dynamic loss scaling",
            MEASURED,
        )
    slow = arch_notes_about(facts, "fp16")
    why = slow[0] if slow else "fp16 has no matrix units here (packed vector math at best)"
    measured = f", measured {speed:.2f}x fp32" if speed is not None else ""
    return AmpChoice(
        FP32,
        f"{bf16.reason}; {why}{measured}: mixed precision does not pay, full fp32",
        MEASURED if speed is not None else SPEC,
    )


def _verified_word(facts: Facts, verdict: Verdict) -> str:
    return "verified by the probe" if verdict.provenance == MEASURED else not_verified(facts)


def _cpu_dtype(facts: Facts) -> AmpChoice:
    bf16 = judge(facts, "bf16")
    if not bf16.ok:
        return AmpChoice(FP32, f"{bf16.reason}: full fp32 on this CPU", bf16.provenance)
    faster = facts.compare_speed("bf16", MIN_MEASURED_GAIN)
    fig = faster.figure
    if fig is None:
        why = "replayed" if facts.replayed else (facts.not_run.get("bench") or "no benchmark ran")
        passed = facts.passed_over("bf16")
        if passed and not facts.replayed:
            why = f"no reliable measurement: {passed[0]}"
        return AmpChoice(
            FP32,
            f"bf16 is native on {facts.arch.family} but its speed was not measured ({why}); "
            "on a CPU bf16 is chosen only when measured faster than fp32 "
            "(run `gpudash export --bench quick`): full fp32",
            SPEC,
        )
    note = f"; {faster.note}" if faster.note else ""
    passed = facts.passed_over("bf16")
    if passed:  # a newer benchmark was measured under contention (or beyond the ISA) and left out: say so
        note += f"; left out as unreliable: {passed[0]}"
    if faster.answer is None:
        return AmpChoice(
            FP32,
            f"bf16 native, but whether it is {MIN_MEASURED_GAIN:g}x fp32 here is not settled ({faster.note}): "
            "full fp32 until a measurement is conclusive",
            MEASURED,
        )
    if faster.answer is False:
        return AmpChoice(
            FP32,
            f"bf16 native but measured only {fig.value:.2f}x fp32 here ({fig.describe()}{note}): full fp32",
            MEASURED,
        )
    return AmpChoice(
        BF16,
        f"bf16 native on {facts.arch.family} and measured {fig.value:.1f}x fp32 here ({fig.describe()}{note}): "
        "bfloat16 autocast on the CPU, no loss scaling",
        MEASURED,
    )


def tf32_setting(facts: Facts) -> Setting:
    family = facts.arch.family
    if facts.is_cpu:
        return Setting(False, "TF32 is a GPU matrix-unit mode; it does nothing on a CPU", SPEC)
    verdict = judge(facts, "tf32")
    if not verdict.ok:
        return Setting(False, f"{verdict.reason}: keep fp32 matmuls in full precision", verdict.provenance)
    caveat = ""
    if facts.device.vendor == "amd":
        caveat = (
            "; ROCm TF32 (xf32) is opt-in, older ROCm torch also needs HIPBLASLT_ALLOW_TF32=1, and its "
            "accuracy differs from NVIDIA TF32 (PyTorch numerical-accuracy notes)"
        )
    return Setting(
        True, f"{verdict.reason}: fp32 matmuls outside autocast use TF32 on {family}{caveat}", verdict.provenance
    )


def hf_tf32_setting(facts: Facts, tf32: Setting) -> Setting:
    """HF TrainingArguments(tf32=...): TF32 where torch gets it, except on ROCm, where transformers refuses it."""
    label = "HF TrainingArguments(tf32=...): "
    if not tf32.value:
        return Setting(False, label + tf32.reason, tf32.provenance)
    if facts.device.vendor != "nvidia":
        return Setting(
            False,
            label + "False on ROCm: transformers refuses tf32=True whenever torch.version.cuda is None, as on "
            "every ROCm build (is_torch_tf32_available, checked by TrainingArguments.__post_init__; "
            f"{TRANSFORMERS_TF32}); TF32 (xf32) is set through torch instead (amp.tf32, "
            "gpudash.apply's apply_torch_backends)",
            SPEC,
        )
    return Setting(True, label + tf32.reason, tf32.provenance)


def amp_settings(
    facts: Facts, choice: AmpChoice, tf32: Setting, hf_tf32: Setting
) -> tuple[dict[str, Setting], dict[str, Setting]]:
    """The [amp] and [amp.hf_trainer] tables for the chosen dtype and TF32 decisions (recommend.decisions)."""
    dtype, prov = choice.dtype, choice.provenance
    short = SHORT[dtype]
    amp = {
        "dtype": Setting(dtype, choice.reason, prov),
        "loss_scaling": Setting(
            choice.loss_scaling,
            "float16 underflows small gradients: torch.amp.GradScaler scales the loss dynamically"
            if dtype == FP16
            else f"{short}: no loss scaling (bf16 has fp32's exponent range)"
            if dtype == BF16
            else "fp32: no loss scaling",
            prov,
        ),
        "autocast": Setting(
            dtype != FP32,
            "torch.autocast around the forward pass" if dtype != FP32 else "no autocast: the model runs in fp32",
            prov,
        ),
        "lightning_precision": Setting(
            LIGHTNING_PRECISION[dtype], f"Lightning Trainer(precision=...) for {short}", prov
        ),
        "accelerate_mixed_precision": Setting(
            ACCELERATE_MIXED_PRECISION[dtype], f"accelerate Accelerator(mixed_precision=...) for {short}", prov
        ),
        "tf32": tf32,
        "float32_matmul_precision": Setting(
            "high" if tf32.value else "highest",
            "torch.set_float32_matmul_precision: 'high' allows TF32"
            if tf32.value
            else "torch.set_float32_matmul_precision: 'highest' keeps fp32 matmuls in fp32",
            tf32.provenance,
        ),
    }
    hf = {
        "bf16": Setting(dtype == BF16, f"HF TrainingArguments(bf16=...) for {short}", prov),
        "fp16": Setting(dtype == FP16, f"HF TrainingArguments(fp16=...) for {short}", prov),
        "tf32": hf_tf32,
    }
    return amp, hf


__all__ = [
    "BF16",
    "FP16",
    "FP32",
    "AmpChoice",
    "amp_settings",
    "choose_dtype",
    "hf_tf32_setting",
    "matrix_units",
    "not_verified",
    "tf32_setting",
    "verified_and_faster",
]
