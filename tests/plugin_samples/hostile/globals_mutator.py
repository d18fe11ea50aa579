"""Changes gpudash's own module globals when imported: that must not change gpudash's own process."""

import gpudash
import gpudash.errors
import gpudash.plugin_manager.runs
from gpudash.plugins_api import Check, hookimpl

gpudash.__version__ = "mutated by a plugin"
gpudash.errors.UsageError.exit_code = 0
gpudash.plugin_manager.runs.DEFAULT_CHECK_TIMEOUT_S = 0.001


class AfterMutation(Check):
    name = "after_mutation"
    needs_device = False

    def run(self, device):
        return self.passed(f"gpudash here says it is version {gpudash.__version__}")


@hookimpl
def register_checks(register):
    register(AfterMutation())
