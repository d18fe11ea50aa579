"""Remembered results (probe matrices, benchmark runs) so the next start shows them at once.

Files live under $XDG_STATE_HOME/gpudash (default ~/.local/state/gpudash), one JSON file per
kind and machine, e.g. probe-<machine id>.json. A machine id combines host and device names so a
replayed snapshot never overwrites the live machine's results.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from gpudash.fileio import atomic_write_text
from gpudash.models import now_iso


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "gpudash"


def machine_id(machine) -> str:
    parts = [machine.host.hostname or "", "replayed" if machine.replayed else "live"]
    parts += [f"{d.key}={d.name}" for d in machine.devices]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _path(kind: str, machine) -> Path:
    return state_dir() / f"{kind}-{machine_id(machine)}.json"


def path_of(kind: str, machine) -> Path:
    """Where `kind` is remembered for `machine` (readers that cache by the file's modification time)."""
    return _path(kind, machine)


def save(kind: str, machine, data: Any) -> Path:
    """Store `data` with the time it was saved; later saves of the same kind replace it."""
    path = _path(kind, machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"saved_at": now_iso(), "data": data}
    atomic_write_text(path, json.dumps(record, indent=1))
    return path


def load(kind: str, machine) -> tuple[str, Any] | None:
    """(saved_at, data) of the last save, or None. A damaged file counts as no file."""
    try:
        record = json.loads(_path(kind, machine).read_text(encoding="utf-8"))
        return record["saved_at"], record["data"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def append_history(kind: str, machine, data: Any, keep: int = 20) -> Path:
    """Keep the last `keep` runs (for before/after comparisons), newest last."""
    previous = load(f"{kind}-history", machine)
    runs = previous[1] if previous and isinstance(previous[1], list) else []
    runs.append({"saved_at": now_iso(), "data": data})
    return save(f"{kind}-history", machine, runs[-keep:])
