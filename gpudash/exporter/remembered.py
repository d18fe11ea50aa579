"""The remembered results a scrape reads, re-parsed only when their file changed.

A scrape must stay cheap (a few milliseconds for an 8-GPU node), so each store file is stat'ed and parsed
again only when its modification time or size moved. `signature` changes whenever any input changed; the
recommendation (recommendation.py) is recomputed only then.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpudash import store
from gpudash.health import memory as gpu_memory
from gpudash.measure.bench.store import BENCH_HISTORY_KIND, saved_runs
from gpudash.measure.probe.store import PROBE_KIND, remembered
from gpudash.measure.schema import PrecisionCapabilityMatrix
from gpudash.plugin_manager.remembered import CHECKS_KIND, remembered_checks


def epoch_seconds(iso: object) -> float | None:
    """gpudash's timestamps ("2026-11-22T00:53:47+0000") as Unix seconds; None when absent or malformed."""
    if not isinstance(iso, str):
        return None
    try:
        return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return None


@dataclass
class Results:
    """Everything remembered about one machine, as plain data."""

    probes: dict[str, PrecisionCapabilityMatrix] = field(default_factory=dict)  # device key -> matrix
    bench_runs: list[dict[str, Any]] = field(default_factory=list)  # bench JSON documents, newest first
    checks: list[dict[str, Any]] = field(default_factory=list)  # CheckResult dicts with `checked_at`
    checks_saved_at: str | None = None
    gpu_failures: dict[str, list[Any]] = field(default_factory=dict)  # UUID -> gpudash.health.memory.Failure


class _CachedFile:
    """One store file, read again through its owner's reader (the same checks, and the same one warning when it
    is ignored, as every other reader) only when its modification time or size moved."""

    def __init__(self, path: os.PathLike, read: Callable[[], Any]) -> None:
        self.path, self._read = path, read
        self.stamp: tuple[int, int] | None = None
        self.value: Any = None

    def stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def read(self) -> tuple[tuple[int, int] | None, Any]:
        stamp = self.stat()
        if stamp is None:
            self.stamp, self.value = None, None
            return None, None
        if stamp != self.stamp:
            self.value = self._read()  # None when damaged: counts as none, said once
            self.stamp = stamp
        return self.stamp, self.value


class RememberedResults:
    """Reads a machine's remembered results; `current()` is cheap when nothing changed on disk."""

    def __init__(self, machine) -> None:
        def probes() -> dict[str, PrecisionCapabilityMatrix] | None:
            found = remembered(machine)
            return found[1] if found else None

        self._files = {
            "probe": _CachedFile(store.path_of(PROBE_KIND, machine), probes),
            "history": _CachedFile(
                store.path_of(BENCH_HISTORY_KIND, machine), lambda: [run for _, run in saved_runs(machine)]
            ),
            "checks": _CachedFile(store.path_of(CHECKS_KIND, machine), lambda: remembered_checks(machine)),
            "gpu_failures": _CachedFile(gpu_memory.path(machine), lambda: gpu_memory.remembered(machine)),
        }
        self.signature: tuple = ()
        self._results = Results()

    def current_signature(self) -> tuple:
        """The signature of what is on disk now (each file's stat; nothing parsed)."""
        return tuple(f.stat() for f in self._files.values())

    def current(self) -> Results:
        read = {name: f.read() for name, f in self._files.items()}
        signature = tuple(stamp for stamp, _ in read.values())
        if signature != self.signature:
            checks: tuple[str | None, list[dict]] = read["checks"][1] or (None, [])
            self._results = Results(
                probes=read["probe"][1] or {},
                bench_runs=read["history"][1] or [],
                checks=checks[1],
                checks_saved_at=checks[0],
                gpu_failures=read["gpu_failures"][1] or {},
            )
            self.signature = signature
        return self._results
