"""Whether the dashboard's terminal has gone away.

A terminal that closes normally sends SIGHUP, which ends the dashboard (gpudash.lifetime). A process that is not
the terminal's session (started with setsid, or by a supervisor that gave it a pseudo-terminal without making it
the controlling one) gets no SIGHUP: its reads return end-of-file forever, and Textual's input thread then spins
at a whole core without end. Polling the terminal once a second for a hang-up catches that case.

Whichever notices first, the watch or a write of Textual's that fails on the vanished terminal (an error, exit
1), the dashboard's exit code says the terminal went away: 129 (run_app).
"""

from __future__ import annotations

import os
import select
import sys

HANGUP_EVENTS = select.POLLHUP | select.POLLERR | select.POLLNVAL
EXIT_TERMINAL_GONE = 129  # as for SIGHUP: the terminal went away


def watched_terminal(fd: int) -> int | None:
    """`fd` if it is a terminal worth watching, else None (a pipe, as in a browser session, or no stdin)."""
    try:
        return fd if os.isatty(fd) else None
    except (OSError, ValueError):
        return None


def stdin_terminal() -> int | None:
    """The dashboard's stdin as a terminal worth watching (watched_terminal), or None. Asked before the terminal
    can be gone: once it has hung up, isatty() says it is no terminal at all."""
    try:
        return watched_terminal(sys.__stdin__.fileno()) if sys.__stdin__ is not None else None
    except (OSError, ValueError):  # closed
        return None


def hung_up(fd: int) -> bool:
    """True once the other side of the terminal `fd` has closed."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | HANGUP_EVENTS)
    try:
        return any(events & HANGUP_EVENTS for _, events in poller.poll(0))
    except OSError:
        return True
