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
