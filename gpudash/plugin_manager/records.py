"""What gpudash keeps about each plugin (PluginRecord) and about each thing a plugin registered (Registered)."""

from __future__ import annotations

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
    target: str | None = None  # the entry point's value, e.g. "plugins.rocm_checks.hooks"
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
