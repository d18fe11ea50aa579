"""Prints to stdout at import and while registering: none of it may reach gpudash's stdout."""

from gpudash.plugins_api import Check, hookimpl

print("noisy plugin: hello from import")


class Chatty(Check):
    name = "chatty"
    needs_device = False

    def run(self, device):
        print("noisy plugin: hello from run")
        return self.passed("chatted")


@hookimpl
def register_checks(register):
    print("noisy plugin: hello from register_checks")
    register(Chatty())
