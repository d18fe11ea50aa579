"""gpudash's child processes never outlive it, and SIGTERM or SIGHUP end it with one line.

Each child of the runner (gpudash.measure.runner) leads a process group of its own: its own session, so the
terminal's Ctrl-C reaches gpudash alone, which then ends the child. Whatever the child starts (a plugin's own
processes) joins that group. gpudash keeps the groups it started here and kills each whole group:

- when the child's work is over (the runner, also after a normal end, for what the child left behind),
- at a normal exit of gpudash (atexit),
- on SIGTERM and SIGHUP once install_exit_handlers() ran: then gpudash says so in one line and exits with
  128 + the signal number (143, 129), as a shell reports a command killed by that signal,
- and when gpudash dies without running any code of its own (SIGKILL, a crash): the child watches a pipe
  whose only writer is gpudash and ends its group when the kernel closes it (gpudash.measure.lifeline).

Ctrl-C stays Python's KeyboardInterrupt: the commands catch it, the runner kills the child on the way out.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from types import FrameType

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
UNWIND_LIMIT_S = 5.0  # after the signal, how long unwinding may take before the process just ends

# Process-group ids of live children. A plain set, no lock: the signal handler reads it, and a lock held by
# the interrupted code would deadlock it; adding, discarding and copying a set are atomic under the GIL.
_groups: set[int] = set()
_terminating = False


class Terminated(SystemExit):
    """Raised in the main thread by the SIGTERM/SIGHUP handler; exits with 128 + the signal number."""


def track(pgid: int) -> None:
    _groups.add(pgid)


def forget(pgid: int) -> None:
    _groups.discard(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL to every process of the group. Only for a group whose leader has not been reaped yet (alive or
    a zombie): until then its id cannot be given to another process."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_children() -> None:
    """End every child group gpudash started and has not finished with. Safe inside a signal handler."""
    for pgid in list(_groups):
        kill_group(pgid)


atexit.register(kill_children)


def install_exit_handlers() -> None:
    """SIGTERM and SIGHUP: kill the child groups, print one line, exit 128 + signum. Call from the main thread."""
    for signum in EXIT_SIGNALS:
        signal.signal(signum, _on_exit_signal)


def exit_message(signum: int) -> str:
    return f"gpudash: terminated by {signal.Signals(signum).name}"


def _on_exit_signal(signum: int, frame: FrameType | None) -> None:
    global _terminating
    kill_children()
    code = 128 + signum
    if _terminating:  # a second signal while unwinding: stop now
        os._exit(code)
    _terminating = True
    try:
        sys.stderr.write(exit_message(signum) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # SIGHUP: the terminal may be gone
        pass
    # Unwinding runs finally blocks and atexit (a half-written temporary file is removed, the terminal is
    # restored); should something hold it up, end anyway.
    deadline = threading.Timer(UNWIND_LIMIT_S, os._exit, args=(code,))
    deadline.daemon = True
    deadline.start()
    raise Terminated(code)
