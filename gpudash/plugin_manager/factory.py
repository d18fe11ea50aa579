"""make_plugin_manager: a fresh plugin manager loaded from entry points and plugin directories."""

from __future__ import annotations

from gpudash.plugin_manager.entry_points import load_entry_point_plugins
from gpudash.plugin_manager.manager import GpudashPluginManager
from gpudash.plugin_manager.plugin_files import load_plugin_dir
from gpudash.plugin_manager.reporting import ErrorReporter, report_to_stderr
from gpudash.plugin_manager.selection import LOAD_ENV, allowed_names, unmatched
from gpudash.plugin_manager.vetting import candidates, vet_plugins


def make_plugin_manager(
    plugin_dirs=(),
    load_entry_points: bool = True,
    *,
    on_error: ErrorReporter | None = report_to_stderr,
    vet_failures: dict[str, str] | None = None,
) -> GpudashPluginManager:
    """A fresh plugin manager (nothing is built at import time): entry points, then one-file plugins.

    Third-party plugins are vetted in a child process first (gpudash.plugin_manager.vetting); those that
    crash or hang it are recorded as failed and never imported here. A child process that runs plugins
    passes the parent's verdicts as `vet_failures` (plugin_key -> reason) instead of vetting again.
    `on_error(plugin, message)` hears each load error (default: one line on stderr; the TUI passes None and
    shows `pm.records` instead). Raises UsageError for a plugin directory that does not exist.
    """
    pm = GpudashPluginManager(on_error)
    allowed = allowed_names()
    if vet_failures is None:
        vet_failures = vet_plugins(candidates(plugin_dirs, load_entry_points, allowed))
    pm.vet_failures = dict(vet_failures)
    if load_entry_points:
        load_entry_point_plugins(pm, allowed)
    for directory in plugin_dirs:
        load_plugin_dir(pm, str(directory), allowed)
    if allowed and on_error:
        for name in unmatched(allowed, pm.records.values()):
            on_error(name, f"named in {LOAD_ENV} but not found")
    return pm
