"""How often a fleet refreshes: longer as the fleet grows, so a big fleet costs the viewer little CPU.

all-smi's view does the same (3 s for a handful of nodes, 6 s past a hundred). Through Prometheus the pace is
also held to CPU_SHARE of one core: a round that costs more CPU than that share of the interval makes the next
interval longer (at 1,024 hosts x 8 GPUs a round took 0.65-0.9 s of CPU on a 2-core VM, depending on the VM's
speed that day). A configured interval (config fleet.interval, --interval) wins over both.
"""

from __future__ import annotations

STEPS = ((10, 3.0), (50, 4.0), (100, 5.0))
LARGEST = 6.0


def refresh_interval(hosts: int, configured: float = 0.0) -> float:
    if configured > 0:
        return configured
    for up_to, seconds in STEPS:
        if hosts <= up_to:
            return seconds
    return LARGEST


# Of one core, what a fleet view's rounds may take: 4.5 %, half a point under issue 26's 5 % for what is paid
# between rounds and for the first rounds, read at the scrape interval before their cost is known.
CPU_SHARE = 0.045


def within_cpu_share(interval_s: float, round_cpu_s: float, share: float = CPU_SHARE) -> float:
    """`interval_s`, or longer: long enough that rounds of `round_cpu_s` CPU seconds take at most `share` of
    one core."""
    return max(interval_s, round_cpu_s / share)
