"""GPUDASH_LOAD_PLUGINS=name1,name2: which plugins may load.

A name selects an entry point by its own name or its distribution's (`gpudash` selects both built-ins), or a
one-file plugin by its file stem; names compare canonically (case, and -_. alike). Unset: everything loads;
empty: nothing does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from gpudash.plugin_manager.records import ENTRY_POINT, PluginRecord

LOAD_ENV = "GPUDASH_LOAD_PLUGINS"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_names(environ: dict[str, str] | None = None) -> set[str] | None:
    """GPUDASH_LOAD_PLUGINS as a set of canonical names; None when unset (load everything)."""
    value = (os.environ if environ is None else environ).get(LOAD_ENV)
    if value is None:
        return None
    return {canonical(n.strip()) for n in value.split(",") if n.strip()}


def selected(allowed: set[str] | None, *names: str) -> bool:
    """Whether a plugin known by any of `names` may load."""
    return allowed is None or any(canonical(name) in allowed for name in names)


def unmatched(allowed: set[str], records: Iterable[PluginRecord]) -> list[str]:
    """The names in GPUDASH_LOAD_PLUGINS that matched no plugin and no distribution, sorted."""
    found: set[str] = set()
    for record in records:
        found.add(canonical(record.name))
        if record.source == ENTRY_POINT:  # origin is "<distribution> <version>"
            found.add(canonical(record.origin.rsplit(" ", 1)[0]))
    return sorted(allowed - found)
