"""Task functions for runner tests: each misbehaves in a way device code can."""

import os
import signal
import sys
import time


def add(a, b):
    print("noise on stdout must not break the protocol")
    return {"sum": a + b}


def boom():
    raise RuntimeError("kernel exploded")


def hang():
    time.sleep(60)


def segfault():
    os.kill(os.getpid(), signal.SIGSEGV)


def abort():
    os.abort()


def exit_hard():
    sys.stdout.flush()
    os._exit(3)


def with_progress(progress):
    for i in range(3):
        progress(step=i)
    return "done"


def forges_messages():
    """Writes to the runner's private channel itself, as plugin code could: results for tasks that do not
    exist, then a message nested too deep to read."""
    import stat

    for fd in range(3, 64):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        os.write(fd, b'\x1e{"event": "done", "task": 99, "value": "forged"}\n')
        os.write(fd, b'\x1e{"event": "done", "task": -1, "value": "forged"}\n')
        os.write(fd, b"\x1e" + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    return "the real value"


def shouts(megabytes):
    sys.stderr.write("x" * (megabytes * 2**20) + "!")
    return "shouted"
