"""The remembered results a scrape reads, re-parsed only when their file changed.

A scrape must stay cheap (a few milliseconds for an 8-GPU node), so each store file is stat'ed and parsed
again only when its modification time or size moved. `signature` changes whenever any input changed; the
recommendation (recommendation.py) is recomputed only then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpudash import store
from gpudash.measure.bench.store import BENCH_HISTORY_KIND
from gpudash.measure.probe.store import PROBE_KIND
from gpudash.measure.schema import PrecisionCapabilityMatrix
from gpudash.plugin_manager.remembered import CHECKS_KIND


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


class _CachedFile:
    def __init__(self, path: os.PathLike, parse: Callable[[Any], Any]) -> None:
        self.path, self.parse = path, parse
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
            try:
                with open(self.path, encoding="utf-8") as fh:
                    record = json.load(fh)
                self.value = self.parse(record)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self.value = None  # a damaged file counts as none, as store.load does
            self.stamp = stamp
        return self.stamp, self.value


def _probes(record: dict) -> dict[str, PrecisionCapabilityMatrix]:
    return {k: PrecisionCapabilityMatrix.from_dict(v) for k, v in record["data"]["matrices"].items()}


def _history(record: dict) -> list[dict]:
    runs = record["data"]
    return [r["data"] for r in reversed(runs) if isinstance(r, dict) and isinstance(r.get("data"), dict)]


def _checks(record: dict) -> tuple[str | None, list[dict]]:
    checks = record["data"]["checks"]
    return record.get("saved_at"), [c for c in checks if isinstance(c, dict)]


class RememberedResults:
    """Reads a machine's remembered results; `current()` is cheap when nothing changed on disk."""

    def __init__(self, machine) -> None:
        self._files = {
            "probe": _CachedFile(store.path_of(PROBE_KIND, machine), _probes),
            "history": _CachedFile(store.path_of(BENCH_HISTORY_KIND, machine), _history),
            "checks": _CachedFile(store.path_of(CHECKS_KIND, machine), _checks),
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
            )
            self.signature = signature
        return self._results
