"""Imports fine; its check raises, and its register_benchmarks hook raises."""

from gpudash.plugins_api import Check, hookimpl


class Raises(Check):
    name = "raises"
    needs_device = False

    def run(self, device):
        raise RuntimeError("sample check blew up")


@hookimpl
def register_checks(register):
    register(Raises())


@hookimpl
def register_benchmarks(register):
    raise ValueError("sample registration blew up")
