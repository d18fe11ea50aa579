"""Facts for one device of a machine: what discovery (or the snapshot) says, and what was measured on it.

The one place that turns a Machine into the recommender's input, for `gpudash export` and gpudash.amp (and,
through gpudash.amp, the adaptive dispatcher and the ROCm checks), so every path decides from the same facts.
Measurements are read from what probe, bench and export remembered (gpudash.measure.probe.store and
gpudash.measure.bench.store, merged per precision); a replayed machine has none: it was never measured here.
This module reads those stores; the rules (recommend/*) read only the Facts it builds.
"""

from __future__ import annotations

from typing import Any

from gpudash.devices import Machine
from gpudash.measure.bench.store import remembered_speedups
from gpudash.measure.probe.store import remembered_matrix
from gpudash.models import NOT_RUN_REPLAYED, DeviceInfo
from gpudash.recommend.facts import Facts, facts_for

NO_PROBE = "no remembered probe (run `gpudash probe`, or `gpudash export --bench quick`)"
NO_BENCH = "no remembered benchmark (run `gpudash bench`, or `gpudash export --bench quick`)"


def host_cores(machine: Machine) -> int | None:
    """Logical cores of the host, from its CPU device (live, or recorded in the snapshot)."""
    cpu = next((d for d in machine.devices if d.vendor == "cpu"), None)
    return cpu.logical_cores if cpu is not None else None


def available_memory(machine: Machine, device: DeviceInfo) -> int | None:
    """Free device memory right now (live machines only: a snapshot's samples are not this moment)."""
    if machine.replayed:
        return None
    sample = machine.sample(device)
    total = sample.memory_total_bytes or device.memory_total_bytes
    if total and sample.memory_used_bytes is not None:
        return max(0, total - sample.memory_used_bytes)
    return None


def machine_facts(machine: Machine, device: DeviceInfo, **kwargs: Any) -> Facts:
    """Facts for `device` of `machine`: replayed or live, its runtime and host cores, and anything given."""
    kwargs.setdefault("host_logical_cores", host_cores(machine))
    kwargs.setdefault("accelerators_on_host", sum(1 for d in machine.devices if d.vendor != "cpu"))
    return facts_for(device, replayed=machine.replayed, source=machine.label, runtime=machine.runtime, **kwargs)


def add_remembered(facts: Facts, machine: Machine) -> Facts:
    """Put what was remembered for the device into `facts` (probe verdicts, measured speeds), or say why not.

    A measurement the caller just made has normally been remembered, so the store holds it merged with older
    runs; one that could not be saved ("remembering the probe" in not_run) stays as the caller put it.
    """
    if machine.replayed:
        facts.not_run.setdefault("probe", NOT_RUN_REPLAYED)
        facts.not_run.setdefault("bench", NOT_RUN_REPLAYED)
        return facts
    unsaved = {what for what in ("probe", "bench") if f"remembering the {what}" in facts.not_run}
    probe = None if "probe" in unsaved else remembered_matrix(machine, facts.device)
    bench = None if "bench" in unsaved else remembered_speedups(machine, facts.device)
    if probe is not None:
        facts.probe = probe
        facts.not_run.pop("probe", None)
        facts.remembered["probe"] = probe.measured_at or "?"
    elif facts.probe is None:
        facts.not_run.setdefault("probe", NO_PROBE)
    if bench is not None:
        facts.bench = bench
        facts.not_run.pop("bench", None)
        facts.remembered["bench"] = bench.measured_at or "?"
    elif facts.bench is None:
        facts.not_run.setdefault("bench", NO_BENCH)
    return facts
