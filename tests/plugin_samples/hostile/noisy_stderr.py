"""Twenty checks that each print 1 MB to stderr, with no newline and a terminal escape, then raise: the tail
kept of each (it goes into the error result) must stay small."""

import sys

from gpudash.plugins_api import Check, hookimpl

CHECKS = 20
sys.stderr.write("\x1b[31m" + "I" * 1_000_000)


class Noisy(Check):
    needs_device = False

    def __init__(self, i):
        self.name = f"noisy_{i}"

    def run(self, device):
        sys.stderr.write("\x1b[31m" + "E" * 1_000_000)
        sys.stderr.flush()
        raise RuntimeError("too noisy")


@hookimpl
def register_checks(register):
    register(*(Noisy(i) for i in range(CHECKS)))
