"""Why a reading is n/a, in one wording for every face (the dashboard's card, its detail view, `info`).

The driver's own reason wins (NVML's NotSupported, a call that timed out); without one the reading was
simply not reported, and the words say by which source: "not reported by nvml", "not reported by nvml/torch".
Before, the card said "not reported by nvml" where the detail view said "not reported by the driver" for the
same field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

WAITING = "waiting for the first reading"


def not_reported(sources: Iterable[str]) -> str:
    return f"not reported by {'/'.join(sources) or 'any source'}"


def na_reason(field: str, sources: Iterable[str], *reasons: Mapping[str, str] | None) -> str:
    """The first reason any of `reasons` (the sample's, then the device's, ...) gives for `field` (or for
    "all" its readings), else `not_reported(sources)`."""
    for found in reasons:
        if found:
            why = found.get(field) or found.get("all")
            if why:
                return why
    return not_reported(sources)
