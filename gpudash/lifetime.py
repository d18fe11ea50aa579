"""gpudash's child processes never outlive it, SIGTERM or SIGHUP end it with one line, and the dashboard's
start runs in a start mode (`starting`, `started`).

Each child of the runner (gpudash.measure.runner) leads a process group of its own: its own session, so the
terminal's Ctrl-C reaches gpudash alone, which then ends the child. Whatever the child starts (a plugin's own
processes) joins that group. gpudash keeps the groups it started here and kills each whole group:

- when the child's work is over (the runner, also after a normal end, for what the child left behind),
- at a normal exit of gpudash (atexit),
- on SIGTERM and SIGHUP once install_exit_handlers() ran: then gpudash says so in one line and exits with
  128 + the signal number (143, 129), as a shell reports a command killed by that signal (a face with an
  event loop asks to be stopped instead of interrupted: graceful()),
- and when gpudash dies without running any code of its own (SIGKILL, a crash): the child watches a pipe
  whose only writer is gpudash and ends its group when the kernel closes it (gpudash.measure.lifeline).

Ctrl-C stays Python's KeyboardInterrupt: the commands catch it, the runner kills the child on the way out.

The start mode lasts from gpudash.cli.main until the dashboard's first frame (GpudashApp._settle; any other
command leaves it once its words are parsed). In it the cyclic garbage collector is off: the start makes many
objects and frees few, and the collector walked them all several times before the first frame. And threads
hand the GIL over every START_SWITCH_INTERVAL_S rather than Python's 5 ms: the first reading's thread and
Textual's threads, which need it for a moment, no longer wait up to 5 ms for a busy main thread (6-7 ms of the
first frame on a 2-vCPU VM; docs/performance.md, "eighth pass").
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
UNWIND_LIMIT_S = 5.0  # after the signal, how long unwinding may take before the process just ends

START_SWITCH_INTERVAL_S = 0.0005
_switch_interval: float | None = None  # Python's, while the start mode lasts

# Process-group ids of live children. A plain set, no lock: the signal handler reads it, and a lock held by
# the interrupted code would deadlock it; adding, discarding and copying a set are atomic under the GIL.
_groups: set[int] = set()


class Terminated(SystemExit):
    """Raised in the main thread by the SIGTERM/SIGHUP handler; exits with 128 + the signal number."""


def starting() -> None:
    """Enter the start mode (see the module's docstring)."""
    global _switch_interval
    gc.disable()
    if _switch_interval is None:
        _switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(START_SWITCH_INTERVAL_S)


def started() -> None:
    """Leave the start mode: the collector runs, and the GIL changes hands at Python's interval again."""
    global _switch_interval
    gc.enable()
    if _switch_interval is not None:
        sys.setswitchinterval(_switch_interval)
        _switch_interval = None


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
    """SIGTERM and SIGHUP: kill the child groups, exit 128 + signum, and say so in one line on stderr.

    Only the main thread may set signal handlers; called from another (gpudash run inside a host program's
    thread), it leaves them to that program."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in EXIT_SIGNALS:
        signal.signal(signum, _on_exit_signal)
    atexit.register(_say_why)


def exit_message(signum: int) -> str:
    return f"gpudash: terminated by {signal.Signals(signum).name}"


_received: int | None = None  # the exit signal that arrived, until its line is printed
_code: int | None = None  # 128 + that signal
_stop: Callable[[], object] | None = None  # set by graceful()


@contextlib.contextmanager
def graceful(stop: Callable[[], object]) -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP call `stop()` instead of raising Terminated: for a face with an event
    loop (the dashboard), where an exception raised at a random point of the loop would be reported as a
    crash. `stop` runs as a callback of the asyncio loop running in the main thread, if there is one. The face
    then ends normally and returns exit_code(its own code)."""
    global _stop
    previous, _stop = _stop, stop
    try:
        yield
    finally:
        _stop = previous


def exit_code(normal: int) -> int:
    """128 + the exit signal if one arrived, else `normal`."""
    return _code if _code is not None else normal


def _on_exit_signal(signum: int, frame: FrameType | None) -> None:
    global _received, _code
    kill_children()
    code = 128 + signum
    if _received is not None:  # a second signal while unwinding: stop now
        _end_now(code)
    _received, _code = signum, code
    # Unwinding runs finally blocks and atexit (a half-written temporary file is removed, the dashboard gives
    # the terminal back); should something hold it up, end anyway.
    deadline = threading.Timer(UNWIND_LIMIT_S, _end_now, args=(code,))
    deadline.daemon = True
    deadline.start()
    if _stop is None:
        raise Terminated(code)
    asyncio = sys.modules.get("asyncio")  # not imported for this: a running loop would have imported it
    try:
        asyncio.get_running_loop().call_soon_threadsafe(_stop)  # type: ignore[union-attr]
    except (AttributeError, RuntimeError):  # no asyncio, or no loop running here
        _stop()


def _say_why() -> None:
    """The one line, printed at exit: by then the dashboard has given the terminal back (a line printed while
    it ran would vanish with its screen, and it captures sys.stderr meanwhile)."""
    global _received
    if _received is None:
        return
    message, _received = exit_message(_received), None
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # SIGHUP: the terminal may be gone
        pass


def _end_now(code: int) -> None:
    kill_children()
    _say_why()
    os._exit(code)
