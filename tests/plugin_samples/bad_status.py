"""Returns a status that is not pass/warn/fail/skip; and registers something that is not a check."""

from gpudash.plugins_api import CheckResult, hookimpl


class OkIsNotAStatus:
    name = "bad_status"
    needs_device = False

    def run(self, device):
        return CheckResult("", "", "", "ok", "all good?")


@hookimpl
def register_checks(register):
    register(OkIsNotAStatus(), object())
