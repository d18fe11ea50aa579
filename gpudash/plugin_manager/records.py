"""What gpudash keeps about each plugin, which plugins may load, and how plugin trouble stays contained.

PluginRecord and Registered are what `gpudash plugins` shows and what the register_* hooks produced; for a
third-party plugin, known here from its vetting child, Registered.obj is a PluginItem.
GPUDASH_LOAD_PLUGINS=name1,name2 selects plugins: a name matches an entry point by its own name or its
distribution's (`gpudash` selects both built-ins), or a one-file plugin by its file stem, compared canonically
(case, and -_. alike); unset loads everything, empty loads nothing. Plugin code that runs while registering
has its prints sent to stderr, and a raise there (even SystemExit) costs only itself.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gpudash.plugins_api.plain_data import PlainData

# Where a plugin came from; only the first two can be loaded again by a child process.
ENTRY_POINT, FILE, IN_PROCESS = "entry point", "file", "registered in-process"


def plugin_key(source: str, target: str) -> str:
    """Names one plugin's code across processes: its entry point's value or its file's resolved path.

    Not the plugin's name: an entry point and a one-file plugin may share one, and only one of them is broken.
    """
    return f"{source}:{target}"


@dataclass
class PluginRecord(PlainData):
    """What `gpudash plugins` shows for one plugin."""

    name: str
    source: str  # ENTRY_POINT | FILE | IN_PROCESS
    origin: str  # the distribution ("gpudash 0.1.0"), the file path, or the object's module
    version: str | None = None
    target: str | None = None  # the entry point's value, e.g. "gpudash_plugins.rocm_checks.hooks"
    loaded: bool = False
    hooks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    provides: dict[str, list[str]] = field(  # what its register_* hooks registered, by name
        default_factory=lambda: {"checks": [], "benchmarks": [], "kernels": []}
    )


@dataclass(frozen=True)
class Registered:
    """A check, benchmark or kernel and the plugin that registered it."""

    plugin: str
    name: str
    obj: Any


@dataclass(frozen=True)
class PluginItem:
    """A check, benchmark or kernel that a third-party plugin registered in its vetting child, as gpudash's own
    process knows it: what deciding where and how long to run it takes, never the plugin's code
    (gpudash.plugin_manager.catalog). `Registered.obj` holds one of these for such plugins."""

    name: str
    description: str = ""
    needs_device: bool = True  # checks and benchmarks
    vendors: tuple[str, ...] | None = None
    timeout_s: float | None = None
    op: str = ""  # kernels
    precision: str = ""
    priority: int = 0


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


ErrorReporter = Callable[[str, str], None]


def report_to_stderr(plugin: str, message: str) -> None:
    print(f"gpudash: plugin {plugin!r}: {message}", file=sys.stderr)
