"""Remembered probe results: the last measured matrices of a machine, for the TUI and gpudash.amp."""

from __future__ import annotations

from typing import Any

from gpudash import store
from gpudash.devices import Machine
from gpudash.field_checks import FieldProblem, build
from gpudash.measure.probe.report import PROBE_VERSION
from gpudash.measure.schema import PrecisionCapabilityMatrix

PROBE_KIND = "probe"


def remember(machine: Machine, matrices: dict[str, PrecisionCapabilityMatrix]) -> Any:
    """Save measured matrices (merged with those of devices not probed this time); replays are not saved."""
    if machine.replayed:
        return None
    previous = remembered(machine)
    merged = dict(previous[1]) if previous else {}
    merged.update({k: m for k, m in matrices.items() if m.provenance == "measured"})
    return store.save(
        PROBE_KIND, machine, {"version": PROBE_VERSION, "matrices": {k: m.to_dict() for k, m in merged.items()}}
    )


def remembered(machine: Machine) -> tuple[str, dict[str, PrecisionCapabilityMatrix]] | None:
    """(saved_at, {device key: matrix}) of the last saved probe of this machine, or None."""
    record = store.load(PROBE_KIND, machine)
    if record is None:
        return None
    saved_at, data = record
    if not isinstance(data, dict) or data.get("version") != PROBE_VERSION:
        return None  # an older gpudash's record: measured differently, so not shown as this one's
    found = data.get("matrices")
    try:
        if not isinstance(found, dict):
            raise FieldProblem("matrices: missing or not an object")
        matrices = {k: build(PrecisionCapabilityMatrix, v, f"matrices.{k}") for k, v in found.items()}
    except FieldProblem as exc:  # damaged or edited by hand: shown as nothing remembered, said once
        store.damaged(store.path_of(PROBE_KIND, machine), str(exc))
        return None
    return saved_at, matrices
