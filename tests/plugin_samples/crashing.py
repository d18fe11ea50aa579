"""Its check kills its own process with a segfault, as a broken driver call would."""

import os
import signal

from gpudash.plugins_api import Check, hookimpl


class Segfaults(Check):
    name = "segfaults"
    needs_device = False

    def run(self, device):
        os.kill(os.getpid(), signal.SIGSEGV)


@hookimpl
def register_checks(register):
    register(Segfaults())
