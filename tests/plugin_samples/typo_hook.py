"""A hook name typo: pluggy's check_pending must reject the plugin instead of ignoring the hook."""

from gpudash.plugins_api import Check, hookimpl


class Never(Check):
    name = "never_registered"

    def run(self, device):
        return self.passed("should never run")


@hookimpl
def register_chekcs(register):
    register(Never())
