"""How often a fleet refreshes: longer as the fleet grows, so a big fleet costs the viewer little CPU.

all-smi's view does the same (3 s for a handful of nodes, 6 s past a hundred). A configured interval
(config fleet.interval, --interval) wins.
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
