"""GpudashPluginManager: pluggy's manager with a record per plugin, so a broken plugin is shown, not lost.

It accepts a plugin only when every marked function is a known hook (a typo such as register_chekcs is an
error for that plugin, with a suggestion), and remembers where plugins came from so that a child process can
load the same ones again.
"""

from __future__ import annotations

import contextlib
import difflib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import pluggy

from gpudash import hookspecs
from gpudash.lifetime import Terminated
from gpudash.plain_text import one_line
from gpudash.plugin_manager.records import (
    ENTRY_POINT,
    FILE,
    IN_PROCESS,
    ErrorReporter,
    PluginRecord,
    Registered,
    report_to_stderr,
)
from gpudash.plugins_api import PROJECT

HOOKS = ("register_benchmarks", "register_checks", "register_kernels")


T = TypeVar("T")


class GpudashPluginManager(pluggy.PluginManager):
    def __init__(self, on_error: ErrorReporter | None = report_to_stderr) -> None:
        super().__init__(PROJECT)
        self.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.plugin_dirs: list[str] = []  # resolved, in load order
        self.load_entry_points = False
        self.on_error = on_error
        self.collected: dict[str, list[Registered]] = {}  # by register_* hook; registering clears it
        # plugin_key -> why the plugin is not imported here: it crashed or hung its vetting child (loading.py)
        self.vet_failures: dict[str, str] = {}
        # plugin_key -> what the vetting child reported of a plugin that is not imported here (catalog.py)
        self.catalog: dict[str, Any] = {}
        # plugin name -> {register_* hook: its items}, for plugins known from the catalog only
        self.catalogued: dict[str, dict[str, list[Registered]]] = {}
        # Whether third-party plugins may be imported into this process: in a child, or for kernels, which run
        # in the caller's process by nature. gpudash's own process takes them from the catalog instead.
        self.imports_plugins = True
        # In a child process, a KeyboardInterrupt from plugin code is the plugin's fault: no terminal reaches it.
        self.contained = False
        # The config's [plugins] table: the resource limits of the children that run checks and benchmarks
        # (gpudash.plugin_manager.limits); None: its defaults.
        self.limits: dict[str, Any] | None = None

    def fail(self, record: PluginRecord, message: str) -> None:
        message = one_line(message)  # pluggy's messages span lines, a plugin's may hold escapes: one safe line
        record.errors.append(message)
        if self.on_error:
            self.on_error(record.name, message)

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """pluggy's register, also recording plugins registered by hand (tests, embedding)."""
        registered = super().register(plugin, name)
        if registered and registered not in self.records:
            origin = getattr(plugin, "__name__", None) or type(plugin).__module__
            self.records[registered] = PluginRecord(registered, IN_PROCESS, origin, loaded=True)
        if registered:
            self.records[registered].hooks = sorted(c.name for c in self.get_hookcallers(plugin) or [])
        self.collected.clear()
        return registered

    def add(self, plugin: Any, record: PluginRecord) -> bool:
        """Register a loaded plugin object, or reject it (recording why) when pluggy refuses it or one of its
        hooks is not in the spec (check_pending: a typo such as register_chekcs)."""
        self.records[record.name] = record
        try:
            self.register(plugin, name=record.name)
        except (pluggy.PluginValidationError, ValueError) as exc:  # ValueError: one module under two names
            self.fail(record, f"rejected: {exc}")
            return False
        try:
            self.check_pending()
        except pluggy.PluginValidationError:
            unknown = [c.name for c in self.get_hookcallers(plugin) or [] if not c.has_spec()]
            self.unregister(name=record.name)
            record.hooks = []
            for hook in unknown:
                close = difflib.get_close_matches(hook, HOOKS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (hooks are {', '.join(HOOKS)})"
                self.fail(record, f"unknown hook {hook!r}{hint}")
            return False
        record.loaded = True
        return True

    def sources(self) -> dict[str, Any]:
        """Where a child process loads the same plugins from (gpudash.plugin_manager.host)."""
        return {
            "plugin_dirs": list(self.plugin_dirs),
            "load_entry_points": self.load_entry_points,
            "vet_failures": dict(self.vet_failures),
        }

    def runs_in_child(self, plugin: str) -> bool:
        record = self.records.get(plugin)
        return record is not None and record.source in (ENTRY_POINT, FILE)


def run_plugin_code(
    pm: GpudashPluginManager, record: PluginRecord, failure: str, code: Callable[[], T]
) -> tuple[bool, T | None]:
    """(True, what `code()` returned), with its prints sent to stderr; (False, None) when it raised, after
    recording the error against the plugin as `failure` followed by "Type: message".

    Any exception is the plugin's, even SystemExit and, in a child (pm.contained), KeyboardInterrupt. In
    gpudash's own process Ctrl-C and SIGTERM still stop gpudash: only trusted code is imported there.
    """
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return True, code()
    except Terminated:
        raise
    except KeyboardInterrupt as exc:
        if not pm.contained:
            raise
        pm.fail(record, f"{failure}{type(exc).__name__}: {exc}")
        return False, None
    except BaseException as exc:  # ImportError, a raise at import, even SystemExit
        pm.fail(record, f"{failure}{type(exc).__name__}: {exc}")
        return False, None
