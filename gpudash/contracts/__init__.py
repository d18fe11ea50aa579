"""The JSON contracts gpudash writes and reads, as JSON Schema (draft 2020-12) files shipped with the package.

One file per contract: the snapshot file, the JSON of info, probe, bench (and bench --compare), check and
plugins, the export tree (TOML and JSON alike) and the calibration profile. docs/ARCHITECTURE.md names each
one's producer; tests/test_contracts.py validates real command output against them (with `jsonschema`). The
readers check the files they read against them through `validation.problems` (jsonschema-rs, imported then).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

NAMES = (
    "snapshot",
    "info",
    "probe",
    "bench",
    "bench-compare",
    "check",
    "plugins",
    "export",
    "profile",
    "fleet",
    "preflight",
)


def schema(name: str) -> dict[str, Any]:
    """The schema of contract `name` (one of NAMES) as a dict."""
    if name not in NAMES:
        raise KeyError(f"no contract named {name!r} (known: {', '.join(NAMES)})")
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    return json.loads(text)
