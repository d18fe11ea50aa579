"""`gpudash fleet --filter` and `--sort`: a small grammar an operator types, e.g. `temp>85 host~=dgx`.

A filter is terms separated by spaces, all of which must hold (AND). A term is FIELD OP VALUE:

  FIELD  host, status, health, model, vendor (words), util, temp, power, mem (numbers: %, C, W, GiB used)
  OP     = != (exact, case-insensitive)  ~= (contains, case-insensitive)  > >= < <= (numbers)

Host fields (host, status, health) pick hosts; device fields pick a host's GPUs (MIG instances go with their GPU),
and a host with none left is not shown. A bad term is one line naming it (UsageError, exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from gpudash.errors import UsageError
from gpudash.fleet.model import Device, FleetRound, Host

HOST_FIELDS = ("host", "status", "health")
WORD_FIELDS = ("model", "vendor")
NUMBER_FIELDS = {  # field -> how to read it from a device, in the unit the user types
    "util": lambda d: None if d.utilization_ratio is None else d.utilization_ratio * 100,
    "temp": lambda d: d.temperature_celsius,
    "power": lambda d: d.power_watts,
    "mem": lambda d: None if d.memory_used_bytes is None else d.memory_used_bytes / 2**30,
}
FIELDS = (*HOST_FIELDS, *WORD_FIELDS, *NUMBER_FIELDS)
TERM = re.compile(r"^([a-z]+)(~=|!=|>=|<=|=|>|<)(.+)$")
SORTS = ("host", "status", "health", "util", "temp", "power", "mem", "gpus")


@dataclass(frozen=True)
class Term:
    field: str
    op: str
    value: str
    number: float | None = None

    def holds(self, seen: str | float | None) -> bool:
        if seen is None:
            return self.op == "!="  # no reading: only "not equal" holds
        if self.number is not None:
            x = float(seen)
            return {
                ">": x > self.number,
                ">=": x >= self.number,
                "<": x < self.number,
                "<=": x <= self.number,
                "=": x == self.number,
                "!=": x != self.number,
            }[self.op]
        text, want = str(seen).lower(), self.value.lower()
        return {"=": text == want, "!=": text != want, "~=": want in text}[self.op]


def parse_filter(text: str) -> list[Term]:
    terms = []
    for word in text.split():
        match = TERM.match(word)
        if match is None:
            raise UsageError(f"--filter {word!r}: expected FIELD OP VALUE, e.g. temp>85 or host~=dgx")
        field, op, value = match.groups()
        if field not in FIELDS:
            raise UsageError(f"--filter {word!r}: unknown field {field!r}; fields: {', '.join(FIELDS)}")
        number = None
        if field in NUMBER_FIELDS:
            if op == "~=":
                raise UsageError(f"--filter {word!r}: {field} is a number: use = != > >= < <=")
            try:
                number = float(value)
            except ValueError:
                raise UsageError(f"--filter {word!r}: {value!r} is not a number") from None
        elif op not in ("=", "!=", "~="):
            raise UsageError(f"--filter {word!r}: {field} is a word: use = != ~=")
        terms.append(Term(field, op, value, number))
    return terms


def _host_value(host: Host, field: str) -> str | None:
    return {"host": host.name, "status": host.status, "health": host.health}[field]


def _device_value(device: Device, field: str) -> str | float | None:
    if field == "model":
        return device.name
    if field == "vendor":
        return device.vendor
    return NUMBER_FIELDS[field](device)


def apply_filter(fleet: FleetRound, terms: list[Term]) -> FleetRound:
    """The round with only the hosts, and the GPUs of each, that every term lets through."""
    if not terms:
        return fleet
    host_terms = [t for t in terms if t.field in HOST_FIELDS]
    device_terms = [t for t in terms if t.field not in HOST_FIELDS]
    kept = []
    for host in fleet.hosts:
        if not all(t.holds(_host_value(host, t.field)) for t in host_terms):
            continue
        if device_terms:
            gpus = {
                d.gpu_id
                for d in host.devices
                if d.mig_instance is None and all(t.holds(_device_value(d, t.field)) for t in device_terms)
            }
            if not gpus:
                continue
            host = replace(host, devices=[d for d in host.devices if d.gpu_id in gpus])
        kept.append(host)
    return replace(fleet, hosts=kept)


def _most(host: Host, read: Callable[[Device], float | None]) -> float:
    values = [v for d in host.devices if (v := read(d)) is not None]
    return max(values) if values else float("-inf")


SEVERITY_ORDER = {"CRITICAL": 4, "WARN": 3, "UNKNOWN": 2, "OK": 1, None: 0}
STATUS_ORDER = {"unreachable": 5, "degraded": 4, "empty": 3, "stale": 2, "up": 1}


def sort_hosts(fleet: FleetRound, key: str) -> FleetRound:
    """Hosts by name (A-Z), or worst first: status, health, and the hottest, busiest, most drawing GPU."""
    if key not in SORTS:
        raise UsageError(f"--sort {key!r}: expected one of {', '.join(SORTS)}")
    if key == "host":
        return fleet
    order: Callable[[Host], float]
    if key == "status":
        order = lambda h: STATUS_ORDER.get(h.status, 0)  # noqa: E731
    elif key == "health":
        order = lambda h: SEVERITY_ORDER.get(h.health, 0)  # noqa: E731
    elif key == "gpus":
        order = lambda h: h.gpus  # noqa: E731
    else:
        read = NUMBER_FIELDS[key]
        order = lambda h: _most(h, read)  # noqa: E731
    return replace(fleet, hosts=sorted(fleet.hosts, key=lambda h: (-order(h), h.name)))
