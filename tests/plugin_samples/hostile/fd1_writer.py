"""Writes straight to file descriptor 1, not through sys.stdout, at import, while registering and while its
check runs: none of it may reach gpudash's stdout, where `check --json` goes."""

import os

from gpudash.plugins_api import Check, hookimpl

os.write(1, b"FD1 NOISE AT IMPORT " * 100_000)  # 2 MB


class WritesToFd1(Check):
    name = "fd1_check"
    needs_device = False

    def run(self, device):
        os.write(1, b"FD1 NOISE AT RUN " * 100_000)
        return self.passed("wrote to fd 1")


@hookimpl
def register_checks(register):
    os.write(1, b"FD1 NOISE AT REGISTER\n")
    register(WritesToFd1())
