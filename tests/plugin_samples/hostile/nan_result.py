"""Results that break the contract: a NaN in a check's details, terminal escapes in its summary, an infinite
GFLOPS figure from a benchmark. None of it may reach `check --json`, `bench --json` or the screen as such."""

from gpudash.plugins_api import Benchmark, BenchResult, Check, hookimpl


class NanDetails(Check):
    name = "nan_details"
    needs_device = False

    def run(self, device):
        return self.passed("a ratio that is not a number", details={"ratio": float("nan")})


class EscapesInSummary(Check):
    name = "escapes_in_summary"
    needs_device = False

    def run(self, device):
        return self.warned("\x1b[2J\x1b[31mscreen cleared\r\nand\u202eflipped", remediation="set\x07 X")


class InfiniteGflops(Benchmark):
    name = "infinite_gflops"

    def run(self, device, budget_s):
        return [BenchResult("fp32", "noop", [1], float("inf"), 1e-9)]


@hookimpl
def register_checks(register):
    register(NanDetails(), EscapesInSummary())


@hookimpl
def register_benchmarks(register):
    register(InfiniteGflops())
