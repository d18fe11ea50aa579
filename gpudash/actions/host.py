"""How busy the session's host is (CPU, memory, swap, load), for the monitor's host line.

A replayed machine has none: a snapshot records its GPUs, not the host's load, and this machine's load
would be a figure about the wrong machine.
"""

from __future__ import annotations

from gpudash.actions.session import Session
from gpudash.devices.host_load import HostLoad, HostLoadReader

REPLAYED_NO_HOST_LOAD = "host load not recorded (replayed: a snapshot keeps the GPUs, not the host's CPU or memory)"


class HostMonitor:
    """Reads the host's load for a session, one reading per call (CPU% over the time since the last)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._reader = HostLoadReader()

    def read(self) -> HostLoad | None:
        """None on a replayed machine (REPLAYED_NO_HOST_LOAD says why)."""
        if self.session.machine(include_torch=False).replayed:
            return None
        return self._reader.read()
