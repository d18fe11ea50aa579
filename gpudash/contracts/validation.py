"""A document checked against its contract (the schema files beside this module), for the readers.

The validator is jsonschema-rs, imported only when a file is read: importing it and building the snapshot
validator took about 10 ms here, against about 25 ms for fastjsonschema (which knows drafts up to 7, not the
2020-12 these schemas are written in) and 40-75 ms for jsonschema (docs/performance.md, "Reading files").

Keys a contract does not list are no problem to a reader: a newer gpudash may add fields, and every reader
ignores what it does not know. So the "additional properties" findings are left out here; the contracts stay
strict for what gpudash writes (tests/test_contracts.py).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from gpudash.contracts import schema
from gpudash.plain_text import one_line


@cache
def _validator(name: str) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema(name))


def where(path: Any) -> str:
    """["devices", 0, "samples", 3, "power_w"] as devices[0].samples[3].power_w."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def problems(name: str, data: Any, limit: int = 1) -> list[str]:
    """Up to `limit` one-line problems of `data` against contract `name` ("where: what"), [] when it holds."""
    import jsonschema_rs

    found = []
    for error in _validator(name).iter_errors(data):
        if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties):
            continue
        found.append(f"{where(error.instance_path) or 'top level'}: {one_line(error.message, 200)}")
        if len(found) >= limit:
            break
    return found
