"""Kills its own process with a segfault while it is imported, as a broken native extension would."""

import os
import signal

os.kill(os.getpid(), signal.SIGSEGV)
