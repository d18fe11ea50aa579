"""Recording the session's machine as a snapshot file: devices plus a few seconds of readings, which
`--replay` (or GPUDASH_REPLAY) plays back anywhere."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gpudash import strict_json
from gpudash.actions.session import Session


def take(
    session: Session,
    seconds: float,
    interval: float,
    sleep: Callable[[float], None] = time.sleep,
    *,
    redact: bool = False,
) -> dict[str, Any]:
    """The snapshot document: the devices, and a reading every `interval` seconds for `seconds`; with `redact`,
    its identifiers replaced by stable placeholders (gpudash.redaction), for a public bug report."""
    from gpudash.record import record

    document = record(session.machine(), seconds, interval, sleep=sleep)
    if not redact:
        return document
    from gpudash.redaction import redact as redacted

    return redacted(document)


def text(snapshot: dict[str, Any]) -> str:
    """The snapshot file's content."""
    return strict_json.dumps(snapshot, indent=1) + "\n"


def write(snapshot: dict[str, Any], path: str) -> str:
    """Write the snapshot file ("-": stdout) through gpudash.fileio: "created", "replaced" or "streamed"."""
    from gpudash.fileio import write_output

    return write_output(path, text(snapshot))
