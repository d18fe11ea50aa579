"""Both ends of the lifeline that ends a runner child, and all it started, when gpudash ends in any way.

gpudash (the runner) makes a pipe per child and keeps its write end; the child gets the read end. Nobody ever
writes to it: when gpudash exits, is killed (even by SIGKILL) or crashes, the kernel closes the write end and
a read of the pipe returns end-of-file.

In the child, before anything else runs:
- a watcher process is forked (while the child has no threads, so forking is safe). It lets go of every other
  file (the pipes to gpudash must close when the child ends), blocks reading the lifeline, and on end-of-file
  kills the child's whole process group: the child, anything a plugin started, and itself. A separate process,
  so that a child stuck in native code, holding Python's lock, is ended all the same.
- on Linux the child also asks the kernel for SIGKILL when its parent goes (prctl PR_SET_PDEATHSIG), and
  checks that the parent did not go before it asked. The kernel sends it when the parent *thread* that
  started the child ends; the runner's thread waits for its child, so that is when gpudash goes.

What a plugin moves out of the group (setsid, a daemon) is beyond this: only a cgroup could follow it.
"""

from __future__ import annotations

import os
import signal
import sys

LIFELINE_ENV = "GPUDASH_LIFELINE_FD"  # the read end's descriptor number in the child
PARENT_ENV = "GPUDASH_PARENT_PID"  # gpudash's pid, to tell whether it went before the child was ready
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def open_lifeline() -> tuple[int, int]:
    """(read end for the child, write end gpudash keeps). Both close on exec; the runner passes the read end."""
    return os.pipe()


def child_environment(env: dict[str, str], read_end: int) -> dict[str, str]:
    return {**env, LIFELINE_ENV: str(read_end), PARENT_ENV: str(os.getpid())}


def hold(parent_died_exit_code: int = 1) -> None:
    """Called first in the child: from here on it ends when gpudash does. The variables go, so that a process
    the child starts does not take them for its own."""
    fd_text = os.environ.pop(LIFELINE_ENV, None)
    parent_text = os.environ.pop(PARENT_ENV, None)
    _die_with_parent()
    if parent_text and os.getppid() != int(parent_text):  # gpudash went before prctl: nobody to work for
        os._exit(parent_died_exit_code)
    if fd_text:
        _start_watcher(int(fd_text))


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl (another C library): the watcher still covers it
        pass


def _start_watcher(fd: int) -> None:
    if os.fork() != 0:
        os.close(fd)  # the child itself has no use for it
        return
    try:  # the watcher: nothing but a blocking read, then the end of the group
        os.closerange(0, fd)
        os.closerange(fd + 1, _max_fd())
        while os.read(fd, 1):
            pass
    except BaseException:  # whatever happens here, the group must end
        pass
    finally:
        try:
            os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(0)


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        return 65536
