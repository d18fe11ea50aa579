"""What one target may say about the fleet: a bounded number of hosts and devices, and only hosts it owns.

An exporter describes its own machine, but its series' `hostname` label is the exporter's word: an endpoint
whose series carried 57,352 hostnames became 57,352 hosts (2 GB, a 16 s round), and one could add its GPUs to
another host's row by naming that host (issues 26 and 27). So:

- `Claims` counts, while an answer is parsed, the hosts and devices it names; beyond `max_hosts` hosts or
  `max_devices` devices (config fleet.max_hosts_per_target / max_devices_per_target) the rest of its series are
  dropped, and `note()` names the target and what was dropped.
- `owners` decides which rows the claims land in. A hostname belongs to the target address spelled with that
  name (gpu1 or gpu1.example.com for "gpu1"), else to the address of the first target (in the order the user
  listed them) that claimed it. Targets at that same address (dcgm-exporter and gpudash
  serve on one machine, on two ports) share its row; a target at another address that claims the same name
  gets a row of its own, `NAME@ADDRESS`, and a note says so: it never adds devices to the owner's row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gpudash.fleet.series import Series

NAMES_COUNTED = 10_000  # distinct dropped names counted at most (a count, never a list of what was sent)


@dataclass
class Claims:
    default_host: str
    max_hosts: int
    max_devices: int
    hosts: set[str] = field(default_factory=set)
    devices: set[tuple[str, str]] = field(default_factory=set)
    dropped_hosts: set[str] = field(default_factory=set)
    dropped_devices: int = 0
    _dropped_device_keys: set[tuple[str, str]] = field(default_factory=set)

    def admit(self, series: Series) -> bool:
        """Whether this series of the answer is kept: its host and device are within the target's bounds."""
        host = series.host or self.default_host
        if host not in self.hosts:
            if len(self.hosts) >= self.max_hosts:
                if len(self.dropped_hosts) < NAMES_COUNTED:
                    self.dropped_hosts.add(host)
                return False
            self.hosts.add(host)
        if series.device is None:
            return True
        key = (host, series.device.key)
        if key not in self.devices:
            if len(self.devices) >= self.max_devices:
                if key not in self._dropped_device_keys and len(self._dropped_device_keys) < NAMES_COUNTED:
                    self._dropped_device_keys.add(key)
                    self.dropped_devices += 1
                return False
            self.devices.add(key)
        return True

    def note(self, target: str) -> str | None:
        """One line naming the target and what was dropped, or None when it stayed within its bounds."""
        parts = []
        if self.dropped_hosts:
            more = "+" if len(self.dropped_hosts) >= NAMES_COUNTED else ""
            parts.append(f"{len(self.dropped_hosts)}{more} more hosts (at most {self.max_hosts})")
        if self.dropped_devices:
            more = "+" if self.dropped_devices >= NAMES_COUNTED else ""
            parts.append(f"{self.dropped_devices}{more} more devices (at most {self.max_devices})")
        if not parts:
            return None
        return (
            f"{target}: named {' and '.join(parts)}; those series were dropped "
            "(fleet.max_hosts_per_target, fleet.max_devices_per_target)"
        )


def owners(claims: Iterable[tuple[str, str, Iterable[str]]]) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Rows for (target label, address, hostnames claimed), in the user's order of targets: the row name of each
    (label, hostname), and notes on hostnames claimed from more than one address."""
    claims = list(claims)
    owner: dict[str, str] = {}  # hostname (lower case) -> the address that owns it
    for _, address, _ in claims:  # a target reached by a name owns that name (gpu1, gpu1.example.com: "gpu1")
        if not address.replace(".", "").isdigit() and ":" not in address:
            owner.setdefault(address.lower(), address)
            owner.setdefault(address.split(".")[0].lower(), address)
    rows: dict[tuple[str, str], str] = {}
    others: dict[str, list[str]] = {}
    for label, address, names in claims:
        for name in names:
            first = owner.setdefault(name.lower(), address)
            if first == address:
                rows[(label, name)] = name
            else:
                rows[(label, name)] = f"{name}@{address}"
                others.setdefault(name, []).append(label)
    notes = [
        f"hostname {name!r} belongs to {owner[name.lower()]}; also named by "
        f"{', '.join(labels)}, shown apart as {name}@ADDRESS"
        for name, labels in others.items()
    ]
    return rows, notes
