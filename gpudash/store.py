"""Remembered results (probe matrices, benchmark runs) so the next start shows them at once.

Files live under $XDG_STATE_HOME/gpudash (default ~/.local/state/gpudash), one JSON file per
kind and machine, e.g. probe-<machine id>.json. A machine id combines host and device names so a
replayed snapshot never overwrites the live machine's results. Each kind is named once, by the module
that owns its data: PROBE_KIND in gpudash.measure.probe.store, BENCH_HISTORY_KIND in
gpudash.measure.bench.store; every reader and writer uses those names.

Remembered results are a convenience, never a reason to fail: a file that is damaged, of the wrong shape,
not a regular file or too large is ignored with one warning line (`damaged`), and the owner of each kind checks
its data the same way before using it (and says so the same way when it ignores a record written by another
gpudash version). The warning goes to stderr; the dashboard points `warn` at a notification while it runs. A
file that cannot be written is a GpudashError for the caller to report beside what was measured.

A state path that is not a regular file (a FIFO, a device, a directory, a symbolic link) is neither read nor
replaced: it is looked at with lstat, never opened, so a FIFO cannot stall a run after its measuring. The one
warning line says so; saving there raises NotKept, which says the user was already told. A read-only state
file is kept as it is unless the command was given --force (gpudash.fileio).
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpudash import strict_json
from gpudash.errors import GpudashError
from gpudash.fileio import atomic_write_text, read_user_file
from gpudash.models import now_iso
from gpudash.plain_text import one_line


def _say_on_stderr(message: str) -> None:
    print(f"gpudash: warning: {one_line(message, 4000)}", file=sys.stderr, flush=True)


# Where the one warning about a damaged file goes; a face may point it elsewhere.
warn: Callable[[str], None] = _say_on_stderr
_warned: set[str] = set()


def damaged(path: Path, problem: str) -> None:
    """Say once per file and process that remembered results were ignored, and why."""
    if str(path) in _warned:
        return
    _warned.add(str(path))
    warn(f"{path}: remembered results ignored: {problem}")


class NotKept(GpudashError):
    """Results not saved because the state path is not a regular file; its one warning line was already given
    (`damaged`), so callers need not say it again."""


def _odd_file(path: Path) -> str | None:
    """What the state path is when it exists and is not a regular file; None for a regular file or no file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror or exc})"
    if stat.S_ISREG(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        what = f"a symbolic link (to {os.readlink(path)})"
    elif stat.S_ISFIFO(st.st_mode):
        what = "a pipe (FIFO)"
    elif stat.S_ISDIR(st.st_mode):
        what = "a directory"
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        what = f"a device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)})"
    else:
        what = "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file"
    return f"is {what}, not a regular file: gpudash neither reads nor replaces it"


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "gpudash"


def machine_id(machine) -> str:
    parts = [machine.host.hostname or "", "replayed" if machine.replayed else "live"]
    parts += [f"{d.key}={d.name}" for d in machine.devices]
    return _sha1_hex("|".join(parts).encode())[:12]


def _sha1_hex(data: bytes) -> str:
    """SHA-1 from CPython's own module where it is built: the digest hashlib gives, without loading OpenSSL's
    libcrypto, which was 0.6 MiB of the dashboard's resident memory for this one hash of its health reading."""
    try:
        sha1 = importlib.import_module("_sha1").sha1
    except ImportError:
        from hashlib import sha1
    return str(sha1(data).hexdigest())


def _path(kind: str, machine) -> Path:
    return state_dir() / f"{kind}-{machine_id(machine)}.json"


def path_of(kind: str, machine) -> Path:
    """Where results of `kind` for `machine` are kept (for the warnings of the kinds' owners, and readers that
    cache by the file's modification time)."""
    return _path(kind, machine)


def save(kind: str, machine, data: Any) -> Path:
    """Store `data` with the time it was saved; later saves of the same kind replace it.

    GpudashError (one line naming the file) when it cannot be written."""
    path = _path(kind, machine)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GpudashError(f"{path.parent}: cannot keep remembered results: {exc.strerror or exc}") from None
    odd = _odd_file(path)
    if odd is not None:
        damaged(path, odd)
        raise NotKept(f"{path}: {odd}")
    record = {"saved_at": now_iso(), "data": data}
    atomic_write_text(path, strict_json.dumps(record, indent=1))
    return path


def load(kind: str, machine) -> tuple[str, Any] | None:
    """(saved_at, data) of the last save, or None. A damaged file counts as no file, with a warning."""
    path = _path(kind, machine)
    if not os.path.lexists(path):
        return None
    odd = _odd_file(path)
    if odd is not None:
        damaged(path, odd)
        return None
    try:
        record = strict_json.loads(read_user_file(path, "remembered results"))
    except GpudashError as exc:
        damaged(path, str(exc).removeprefix(f"{path}: "))
        return None
    except strict_json.JsonProblem as exc:
        damaged(path, str(exc))
        return None
    if not isinstance(record, dict) or not isinstance(record.get("saved_at"), str) or "data" not in record:
        damaged(path, "not a gpudash results file (no saved_at and data)")
        return None
    return record["saved_at"], record["data"]


def append_history(kind: str, machine, data: Any, keep: int = 20) -> Path:
    """Add `data` to the list stored as `kind`, keeping the last `keep` entries, newest last."""
    runs = [{"saved_at": at, "data": kept} for at, kept in reversed(history(kind, machine))]  # what is damaged goes
    runs.append({"saved_at": now_iso(), "data": data})
    return save(kind, machine, runs[-keep:])


def history(kind: str, machine) -> list[tuple[str, Any]]:
    """(saved_at, data) of the entries append_history kept as `kind`, newest first."""
    found = load(kind, machine)
    if found is None:
        return []
    path = _path(kind, machine)
    if not isinstance(found[1], list):
        damaged(path, f"expected a list of kept entries, found {type(found[1]).__name__}")
        return []
    kept = []
    for position, entry in enumerate(found[1]):
        if isinstance(entry, dict) and isinstance(entry.get("saved_at"), str) and "data" in entry:
            kept.append((entry["saved_at"], entry["data"]))
        else:  # the others are still good
            damaged(path, f"entry {position + 1} is not an object with saved_at and data")
    return kept[::-1]
