"""Its check takes 4 GiB in 64 MiB pieces, each written to (as a plugin that leaks would): under an address-space
limit it must end with MemoryError, reported as the plugin reaching its memory limit."""

from gpudash.plugins_api import Check, hookimpl

PIECE = 64 * 2**20


class MemoryHog(Check):
    name = "memory_hog"
    needs_device = False

    def run(self, device):
        held = []
        for _ in range(4 * 2**30 // PIECE):
            held.append(bytearray(b"x" * PIECE))
        return self.passed(f"held {len(held) * PIECE} bytes")


@hookimpl
def register_checks(register):
    register(MemoryHog())
