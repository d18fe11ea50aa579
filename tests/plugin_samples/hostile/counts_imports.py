"""Appends its process id to the file named by GPUDASH_TEST_IMPORT_LOG each time it is imported."""

import os

from gpudash.plugins_api import Check, hookimpl

if os.environ.get("GPUDASH_TEST_IMPORT_LOG"):
    with open(os.environ["GPUDASH_TEST_IMPORT_LOG"], "a") as log:
        log.write(f"{os.getpid()}\n")


class Counted(Check):
    name = "counted"
    needs_device = False

    def run(self, device):
        return self.passed("imported where it runs")


@hookimpl
def register_checks(register):
    register(Counted())
