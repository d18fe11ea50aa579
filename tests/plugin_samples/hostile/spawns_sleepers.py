"""Its check starts 50 sleeping processes of its own, writes their pids (and its own) to the file named by
GPUDASH_TEST_PID_FILE, then sleeps (or returns, with GPUDASH_TEST_RETURN=1). Without the variable it does
nothing, so that loading every sample stays harmless."""

import os
import subprocess
import time

from gpudash.plugins_api import Check, hookimpl

SLEEPERS = 50


class SpawnsSleepers(Check):
    name = "spawns_sleepers"
    needs_device = False

    def run(self, device):
        pid_file = os.environ.get("GPUDASH_TEST_PID_FILE")
        if not pid_file:
            return self.skipped("GPUDASH_TEST_PID_FILE is not set")
        sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(SLEEPERS)]
        with open(pid_file + ".tmp", "w") as fh:
            fh.write("\n".join(str(pid) for pid in [os.getpid(), *(p.pid for p in sleepers)]) + "\n")
        os.replace(pid_file + ".tmp", pid_file)  # the test reads the whole list or nothing
        if os.environ.get("GPUDASH_TEST_RETURN") == "1":
            return self.passed(f"started {SLEEPERS} sleeping processes and left them")
        time.sleep(300)
        return self.passed("slept")


@hookimpl
def register_checks(register):
    register(SpawnsSleepers())
