"""Asks for 12 GiB while it is imported (a plugin whose module-level code allocates without end): the vetting
child imports it under the shipped address-space limit (8 GiB), so the import fails with MemoryError and the
plugin is reported as failing to import, never loaded. bytearray's pages are not written, so without the limit
the allocation would succeed on most machines and hide the problem."""

from gpudash.plugins_api import Check, hookimpl

HELD = bytearray(12 * 2**30)


class ImportHog(Check):
    name = "import_hog"
    needs_device = False

    def run(self, device):
        return self.passed(f"held {len(HELD)} bytes")


@hookimpl
def register_checks(register):
    register(ImportHog())
