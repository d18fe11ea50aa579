"""`python -m gpudash.web.session SERVER_PID [OPTION ...]`: how each browser session starts.

It asks Linux to end this process when the `gpudash web` server that started it dies (PR_SET_PDEATHSIG
survives exec), then becomes `python -m gpudash tui OPTION ...`. Without it, a server that is killed
(SIGKILL, the OOM killer) leaves every session's dashboard running: the app under textual-serve does
not notice that its input and output pipes have no other end.
"""

import os
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    # The signal comes when the thread that started us ends: textual-serve starts sessions from the server's
    # event-loop thread, its main thread, which lives as long as the server.
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))


def main(argv: list[str]) -> None:
    server_pid, options = int(argv[0]), argv[1:]
    die_with_parent()
    if os.getppid() != server_pid:  # the server died before we asked to go with it
        raise SystemExit(0)
    os.execv(sys.executable, [sys.executable, "-m", "gpudash", "tui", *options])


if __name__ == "__main__":
    if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(os.getcwd()):
        del sys.path[0]  # as in gpudash/__main__.py: nothing in the working directory is imported by accident
    main(sys.argv[1:])
