"""The devices of the session's machine once: identity, architecture, spec precisions, one reading each.

Returns the info JSON contract (gpudash.info.info_json); `gpudash info` prints it or draws it
(gpudash.render.info), and other faces serve it as it is.
"""

from __future__ import annotations

from typing import Any

from gpudash.actions.session import Session


def info(
    session: Session, include_torch: bool = True, with_samples: bool = True, redact: bool = False
) -> dict[str, Any]:
    """The info document; without torch it is faster (torch's own view of the GPUs is left out). With `redact`,
    the hostname, UUIDs, PCI ids and processes are stable placeholders (gpudash.redaction)."""
    from gpudash.info import info_json

    document = info_json(session.machine(include_torch=include_torch), with_samples=with_samples)
    if not redact:
        return document
    from gpudash.redaction import redact as redacted

    return redacted(document)
