"""Drift: hosts whose driver, CUDA or ROCm, torch, gpudash or VBIOS differ from the rest of the fleet.

Hosts are compared with hosts of the same GPU vendor (an NVIDIA driver is not odd beside an AMD one, nor torch
+cu124 beside +rocm6.2): the vendor most of a host's GPUs have, or "none". For each fact, the value most hosts
report is the fleet's; a host reporting another is odd for that fact, and
so marked. With two values equally common nobody is the majority and every host with either is odd: the
operator decides which is right. Hosts that do not report a fact are not counted for it (dcgm-exporter alone
says no torch version).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from gpudash.fleet.model import FleetRound, Host

FACTS = ("driver", "cuda", "rocm", "torch", "gpudash", "vbios")


@dataclass
class Drift:
    fact: str
    vendor: str  # the GPU vendor of the hosts compared
    majority: str | None  # None: no value is held by more hosts than every other
    odd: dict[str, str]  # host -> its value
    hosts: int  # hosts that reported the fact

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": self.fact,
            "vendor": self.vendor,
            "majority": self.majority,
            "odd": dict(self.odd),
            "hosts": self.hosts,
        }


def drift(fleet: FleetRound) -> list[Drift]:
    """One entry per fact that some host reports and on which hosts differ."""
    groups: dict[str, list[Host]] = {}
    for host in fleet.hosts:
        groups.setdefault(vendor_of(host), []).append(host)
    out = []
    for vendor, hosts in sorted(groups.items()):
        for fact in FACTS:
            said = {h.name: h.versions[fact] for h in hosts if h.versions.get(fact)}
            counts = Counter(said.values()).most_common()
            if len(counts) < 2:
                continue
            majority = counts[0][0] if counts[0][1] > counts[1][1] else None
            odd = {host: value for host, value in sorted(said.items()) if value != majority}
            out.append(Drift(fact, vendor, majority, odd, len(said)))
    return out


def vendor_of(host: Host) -> str:
    """The vendor most of the host's GPUs have ("none" for a host without GPUs)."""
    vendors = Counter(d.vendor for d in host.devices if d.vendor != "cpu" and d.mig_instance is None)
    return vendors.most_common(1)[0][0] if vendors else "none"


def odd_facts(drifts: list[Drift]) -> dict[str, list[str]]:
    """host -> the facts on which it is odd."""
    found: dict[str, list[str]] = {}
    for d in drifts:
        for host in d.odd:
            found.setdefault(host, []).append(d.fact)
    return found
