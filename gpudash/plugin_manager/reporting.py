"""Keeping plugin trouble contained: load errors as one line on stderr, plugin prints off stdout.

Plugin code runs in gpudash's own process while plugins load and register, and gpudash may be printing JSON
on stdout at the time; a plugin that raises there (even SystemExit) costs only itself.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from gpudash.plugin_manager.manager import GpudashPluginManager
    from gpudash.plugin_manager.records import PluginRecord

ErrorReporter = Callable[[str, str], None]
T = TypeVar("T")


def report_to_stderr(plugin: str, message: str) -> None:
    print(f"gpudash: plugin {plugin!r}: {message}", file=sys.stderr)


def run_plugin_code(
    pm: GpudashPluginManager, record: PluginRecord, failure: str, code: Callable[[], T]
) -> tuple[bool, T | None]:
    """(True, what `code()` returned), with its prints sent to stderr; (False, None) when it raised, after
    recording the error against the plugin as `failure` followed by "Type: message". Ctrl-C still stops gpudash."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return True, code()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # ImportError, a raise at import, even SystemExit
        pm.fail(record, f"{failure}{type(exc).__name__}: {exc}")
        return False, None
