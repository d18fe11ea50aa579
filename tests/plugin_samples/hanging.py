"""Its check never returns: the runner's time limit must end it."""

import time

from gpudash.plugins_api import Check, hookimpl


class Hangs(Check):
    name = "hangs"
    needs_device = False
    timeout_s = 1.0

    def run(self, device):
        time.sleep(120)


@hookimpl
def register_checks(register):
    register(Hangs())
