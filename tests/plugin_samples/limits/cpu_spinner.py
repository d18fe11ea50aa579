"""Its check computes forever; with GPUDASH_TEST_IGNORE_SIGXCPU=1 it ignores SIGXCPU first, so that only the
hard CPU limit (SIGKILL) ends it."""

import os
import signal

from gpudash.plugins_api import Check, hookimpl


class CpuSpinner(Check):
    name = "cpu_spinner"
    needs_device = False

    def run(self, device):
        if os.environ.get("GPUDASH_TEST_IGNORE_SIGXCPU") == "1":
            signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        n = 0
        while True:
            n += 1


@hookimpl
def register_checks(register):
    register(CpuSpinner())
