"""A memory of bad GPUs: every failed (WARN or CRITICAL) health check, remembered per GPU UUID in the state
folder, so `gpudash check` and `gpudash info` can say "this GPU failed gpu.row_remap on 2026-11-20, seen 3
times" and the same broken board is recognised when it turns up again.

Kept through gpudash.store under GPU_FAILURES_KIND, one file per host (not per machine id: a GPU that is lost
or replaced changes the machine's device list, and the memory must outlive exactly that). Written by
`gpudash check` only, once per run: a run is one sighting. A replay is never remembered (it is not this host).
A damaged record is ignored with store's one warning, as every remembered result is.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from gpudash import store
from gpudash.errors import GpudashError
from gpudash.health.catalog import CATALOG, CRITICAL, WARN, HealthResult, worst
from gpudash.models import now_iso

GPU_FAILURES_KIND = "gpu-failures"
VERSION = 1
MAX_GPUS = 1024  # boards remembered; the ones seen longest ago go first


@dataclass(frozen=True)
class Failure:
    uuid: str
    id: str
    severity: str  # the worst seen
    first: str  # now_iso() of the first and the last sighting
    last: str
    count: int  # check runs that found it failing
    summary: str  # the last sighting's
    action: str

    def line(self) -> str:
        seen = f"seen {self.count} time{'s' if self.count != 1 else ''}"
        since = f", first on {self.first[:10]}" if self.first[:10] != self.last[:10] else ""
        return f"failed {self.id} ({self.severity}) on {self.last[:10]}{since}, {seen}: {self.summary}"

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("id", "severity", "first", "last", "count", "summary", "action")}


def _host_key(machine: Any) -> Any:
    """What store keys the file on: this host, live (a replay is never written)."""
    return SimpleNamespace(host=machine.host, replayed=False, devices=[])


def path(machine: Any) -> Any:
    """The memory's file for this host (readers that cache by modification time: gpudash serve)."""
    return store.path_of(GPU_FAILURES_KIND, _host_key(machine))


def _load(machine: Any) -> dict[str, dict[str, dict[str, Any]]]:
    found = store.load(GPU_FAILURES_KIND, _host_key(machine))
    if found is None:
        return {}
    data = found[1]
    path = store.path_of(GPU_FAILURES_KIND, _host_key(machine))
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("gpus"), dict):
        store.damaged(path, f"expected a gpu-failures record of version {VERSION}; the next check replaces it")
        return {}
    gpus: dict[str, dict[str, dict[str, Any]]] = {}
    for uuid, checks in data["gpus"].items():
        if not isinstance(checks, dict):
            store.damaged(path, f"{uuid}: not an object, left out")
            continue
        kept = {cid: entry for cid, entry in checks.items() if _valid(cid, entry)}
        if len(kept) != len(checks):
            store.damaged(path, f"{uuid}: an entry of the wrong shape was left out")
        gpus[uuid] = kept
    return gpus


def _valid(check_id: str, entry: Any) -> bool:
    if check_id not in CATALOG or not isinstance(entry, dict):
        return False
    texts = all(isinstance(entry.get(k), str) for k in ("severity", "first", "last", "summary", "action"))
    count = entry.get("count")
    return texts and isinstance(count, int) and not isinstance(count, bool) and count > 0


def remembered(machine: Any, uuids: list[str] | None = None) -> dict[str, list[Failure]]:
    """UUID -> its remembered failures, most recent first (only `uuids` when given)."""
    if machine.replayed:
        return {}
    out: dict[str, list[Failure]] = {}
    for uuid, checks in _load(machine).items():
        if uuids is not None and uuid not in uuids:
            continue
        failures = [
            Failure(uuid, cid, **{k: e[k] for k in Failure.__dataclass_fields__ if k not in ("uuid", "id")})
            for cid, e in checks.items()
        ]
        if failures:
            out[uuid] = sorted(failures, key=lambda f: f.last, reverse=True)
    return out


def remember(machine: Any, results: list[HealthResult]) -> dict[str, list[Failure]]:
    """Add this run's failed results (those with a GPU UUID) to the memory; returns the memory after it."""
    failed = [r for r in results if r.severity in (WARN, CRITICAL) and r.uuid]
    if machine.replayed or not failed:
        return remembered(machine)
    gpus = _load(machine)
    now = now_iso()
    for r in failed:
        assert r.uuid is not None and r.severity is not None
        entry = gpus.setdefault(r.uuid, {}).get(r.id)
        if entry is None:
            entry = {"severity": r.severity, "first": now, "count": 0}
        gpus[r.uuid][r.id] = {
            **entry,
            "severity": worst([entry["severity"], r.severity]) or r.severity,
            "last": now,
            "count": entry["count"] + 1,
            "summary": r.summary,
            "action": r.action,
            "device": r.device,
        }
    if len(gpus) > MAX_GPUS:
        newest = sorted(gpus, key=lambda u: max(e["last"] for e in gpus[u].values()), reverse=True)
        gpus = {u: gpus[u] for u in newest[:MAX_GPUS]}
    try:
        store.save(GPU_FAILURES_KIND, _host_key(machine), {"version": VERSION, "gpus": gpus})
    except store.NotKept:
        pass  # its one warning was given
    except GpudashError as exc:  # a state folder that cannot be written: a warning beside the results
        store.warn(str(exc))
    return remembered(machine)
