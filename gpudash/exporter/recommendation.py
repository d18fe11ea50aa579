"""The recommended AMP dtype, batch size and gradient accumulation, as `gpudash export --bench none` would
decide them from the remembered probe, benchmark and checks (no device work at scrape time).

The batch comes from the analytic memory formula of the configured model over the device's total memory, so
it does not move with whatever happens to be running. `recommend()` is pure but not free, so the collector
recomputes it only when a remembered result or the config changed.
"""

from __future__ import annotations

from typing import Any

from gpudash.exporter.bench import newest_by_precision
from gpudash.exporter.family import Family, info
from gpudash.exporter.scrape import Scrape
from gpudash.measure.schema import PrecisionCapabilityMatrix
from gpudash.models import DeviceInfo


def _bench_matrix(scrape: Scrape, device: DeviceInfo) -> PrecisionCapabilityMatrix | None:
    speedups = {
        p: float(r["speedup_vs_fp32"])
        for p, (r, _) in newest_by_precision(scrape.results.bench_runs, device).items()
        if isinstance(r.get("speedup_vs_fp32"), (int, float))
    }
    if not speedups:
        return None
    return PrecisionCapabilityMatrix(hardware_name=device.name, device=device.key, speedup_vs_fp32=speedups)


def settings_for(scrape: Scrape, device: DeviceInfo) -> dict[str, Any]:
    """{"amp_dtype", "amp_provenance", "batch_size", "gradient_accumulation_steps", "effective_batch",
    "batch_method"} for one device; values None when they could not be decided."""
    from gpudash.recommend import choose_dtype, facts_for, recommend
    from gpudash.recommend.model_spec import analytic_memory, model_spec

    machine = scrape.machine
    cpu = next((d for d in machine.devices if d.vendor == "cpu"), None)
    checks = [c for c in scrape.results.checks if c.get("device") == device.key]
    probe = scrape.results.probes.get(device.key)
    facts = facts_for(
        device,
        replayed=machine.replayed,
        source=machine.label,
        runtime=machine.runtime,
        config=scrape.config,
        host_logical_cores=cpu.logical_cores if cpu else None,
        accelerators_on_host=sum(1 for d in machine.devices if d.vendor != "cpu"),
        probe=probe if probe is not None and probe.provenance == "measured" else None,
        bench=_bench_matrix(scrape, device),
        checks=checks or None,
        bench_mode="none",
    )
    spec = model_spec(scrape.config)
    choice = choose_dtype(facts)
    if spec["kind"] == "reference":
        facts.model_memory = analytic_memory(spec, choice.dtype)
    else:
        facts.not_run["memory"] = "a factory model cannot be sized without running it (gpudash export does)"
    settings = recommend(facts)
    return {
        "amp_dtype": settings.value("amp.dtype"),
        "amp_provenance": settings.get("amp.dtype").provenance,
        "batch_size": settings.value("batch.size"),
        "gradient_accumulation_steps": settings.value("batch.gradient_accumulation_steps"),
        "effective_batch": settings.value("batch.effective"),
        "batch_method": settings.value("batch.method"),
    }


def families(scrape: Scrape, decided: dict[str, dict[str, Any]]) -> list[Family]:
    """`decided`: device key -> settings_for(...), computed by the collector when its inputs changed."""
    family = info(
        "gpudash_recommendation_info",
        "Recommended training settings for the configured model: AMP dtype, per-device batch, gradient "
        "accumulation steps, effective batch; provenance measured or spec (value 1)",
    )
    for device in scrape.devices:
        values = decided.get(device.key)
        if values:
            family.add(scrape.with_labels(device, **{k: "" if v is None else v for k, v in values.items()}), 1)
    return [family]
