"""The recommender: a pure function from facts (device, measurements, checks, config) to training settings.

`recommend(facts)` imports no torch, reads no files and no clock: everything it needs is in `Facts`
(gpudash/recommend/facts.py). Each rule lives in its own module: amp, fp8, batch, dataloader, env; the questions
other paths ask too (AMP dtype, TF32, fp8, a kernel's precision, a check's advice) go through
gpudash/recommend/decisions.py, so every path gets the export's answer. recommend/machine_facts.py builds the
facts for a device of a machine, with what probe, bench and export remembered (the one module here that reads).
"""

from __future__ import annotations

from gpudash.recommend import decisions
from gpudash.recommend.amp import AmpChoice, amp_settings, choose_dtype
from gpudash.recommend.batch import batch_settings
from gpudash.recommend.dataloader import dataloader_settings
from gpudash.recommend.env import env_notes, env_settings, routing_settings
from gpudash.recommend.facts import BatchTrial, Facts, ModelMemory, facts_for
from gpudash.recommend.fp8 import fp8_settings
from gpudash.recommend.mamf_reason import add_mamf
from gpudash.recommend.settings import EXPORT_VERSION, Setting, Settings


def device_type(facts: Facts) -> str:
    """torch's device type: ROCm GPUs are "cuda" devices in torch too."""
    return "cpu" if facts.is_cpu else "cuda"


def header(facts: Facts) -> dict:
    dev = facts.device
    return {
        "version": EXPORT_VERSION,
        "generated": facts.generated,
        "gpudash_version": facts.gpudash_version,
        "device": dev.name,
        "device_key": dev.key,
        "device_type": device_type(facts),
        "torch_index": dev.torch_index,  # None (left out) when torch's ordinal is not known
        "vendor": dev.vendor,
        "arch": facts.arch.family,
        "compute_capability": dev.compute_capability,
        "gfx_target": dev.gfx_target,
        "replayed": facts.replayed,
        "source": facts.source,
        "bench": facts.bench_mode,
    }


def _not_run_notes(not_run: dict[str, str]) -> list[str]:
    """'probe, bench: why' once for steps skipped for the same reason."""
    by_reason: dict[str, list[str]] = {}
    for what, why in not_run.items():
        by_reason.setdefault(why, []).append(what)
    return [f"{', '.join(whats)}: {why}" for why, whats in by_reason.items()]


def recommend(facts: Facts) -> Settings:
    choice = decisions.amp_dtype(facts)
    tf32 = decisions.tf32(facts)
    amp, hf = amp_settings(facts, choice, tf32.torch, tf32.hf)
    settings = Settings(header=header(facts))
    for section, values in (
        ("amp", amp),
        ("amp.hf_trainer", hf),
        ("fp8", fp8_settings(facts, decisions.fp8(facts))),
        ("batch", batch_settings(facts, choice.dtype)),
        ("dataloader", dataloader_settings(facts)),
        ("env", env_settings(facts)),
        ("routing", routing_settings(facts)),
    ):
        if values or section == "env":  # [env] is in the contract even when empty
            settings.sections[section] = dict(values)
    settings.notes.extend(facts.arch.notes)
    settings.notes.extend(env_notes(facts))
    settings.notes.extend(_not_run_notes(facts.not_run))
    settings.notes.extend(
        f"{what}: remembered measurements used (newest {when})" for what, when in facts.remembered.items()
    )
    add_mamf(facts, settings)
    return settings


__all__ = [
    "AmpChoice",
    "BatchTrial",
    "Facts",
    "ModelMemory",
    "Setting",
    "Settings",
    "choose_dtype",
    "decisions",
    "device_type",
    "facts_for",
    "recommend",
]
