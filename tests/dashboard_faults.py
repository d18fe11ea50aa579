"""The dashboard whose first sign of a vanished terminal is an error rather than its terminal watch, as when a
write of Textual's fails on it first (tests/test_lifetime.py). Run as a script, with gpudash's arguments; gpudash
has no switch that does this."""

from __future__ import annotations

import errno
import sys

from gpudash.cli import main
from gpudash.tui import terminal_watch
from gpudash.tui.app import GpudashApp


def watch_that_fails(self: GpudashApp) -> None:
    """The terminal watch's poll, raising where it would end the app: an error in the app's timer, which Textual
    ends the app on with exit code 1."""
    fd = sys.__stdin__.fileno()

    def check() -> None:
        if terminal_watch.hung_up(fd):
            raise OSError(errno.EIO, "Input/output error")

    self.set_interval(1.0, check, name="terminal watch")


GpudashApp._watch_terminal = watch_that_fails  # type: ignore[method-assign]
sys.exit(main(sys.argv[1:]))
