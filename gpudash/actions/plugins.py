"""The plugins of a session: the plugin manager for its plugin directories, and the `gpudash plugins` listing.

Every action that runs plugin code (check, bench) gets its manager here, after each plugin directory was
checked to name a real folder, so a typo is one clear line before anything loads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpudash.actions.session import Session
from gpudash.errors import UsageError

if TYPE_CHECKING:
    from gpudash.plugin_manager import ErrorReporter, GpudashPluginManager, PluginRecord

PLUGINS_VERSION = 1


def plugin_manager(session: Session, on_error: ErrorReporter | None = None) -> GpudashPluginManager:
    """A fresh plugin manager; `on_error(plugin, message)` hears each load error (None: keep them in
    the records only, as a full-screen face must)."""
    from gpudash.plugin_manager import make_plugin_manager

    for folder in session.extra_plugin_dirs:
        if not Path(folder).expanduser().is_dir():
            raise UsageError(f"--plugins-dir {folder}: not a directory")
    for folder in session.config["plugin_dirs"]:
        if not Path(folder).expanduser().is_dir():
            raise UsageError(f"config key plugin_dirs: {folder} is not a directory")
    pm = make_plugin_manager(session.plugin_dirs, on_error=on_error)
    pm.limits = session.config["plugins"]  # its checks' and benchmarks' children run under these limits
    return pm


@dataclass
class PluginListing:
    """Every plugin found, loaded or not, and the GPUDASH_LOAD_PLUGINS value that selected them."""

    records: list[PluginRecord]
    load_env: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": PLUGINS_VERSION,
            "load_plugins_env": self.load_env,
            "plugins": [r.to_dict() for r in self.records],
        }


def list_plugins(session: Session, on_error: ErrorReporter | None = None) -> PluginListing:
    from gpudash.plugin_manager import LOAD_ENV
    from gpudash.plugin_manager import list_plugins as records_of

    return PluginListing(records_of(plugin_manager(session, on_error)), os.environ.get(LOAD_ENV))
