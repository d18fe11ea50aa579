"""Remembered benchmark runs: the last runs of a machine (the bench history), newest first when read.

Written only by the bench action (gpudash.actions.bench), after every live run of `gpudash bench` or the
TUI's Benchmarks view; read by that view (earlier runs, before/after) and by gpudash.amp (measured speedups).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpudash import store
from gpudash.devices import Machine

BENCH_HISTORY_KIND = "bench-history"
KEEP = 20  # runs kept per machine


def append_run(machine: Machine, data: dict[str, Any]) -> Path:
    """Keep one run (a bench JSON document) with the time it was saved."""
    return store.append_history(BENCH_HISTORY_KIND, machine, data, keep=KEEP)


def saved_runs(machine: Machine) -> list[tuple[str, dict[str, Any]]]:
    """(saved_at, bench JSON document) of the kept runs, newest first. A run that does not keep to the bench
    contract (gpudash/contracts/bench.schema.json) is left out with one warning: the views that draw it trust
    its fields."""
    from gpudash.contracts.validation import problems

    kept = []
    for at, data in store.history(BENCH_HISTORY_KIND, machine):
        found = problems("bench", data)
        if found:
            store.damaged(store.path_of(BENCH_HISTORY_KIND, machine), f"the run saved at {at}: {found[0]}")
            continue
        kept.append((at, data))
    return kept
