"""The fleet, for every face: open the source the user named (Prometheus, or endpoints to scrape), run
rounds, look up one host. `gpudash fleet` runs one round; the dashboard's Fleet view runs one per interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gpudash.errors import UsageError
from gpudash.fleet.interval import refresh_interval
from gpudash.fleet.model import UP, FleetRound, Host
from gpudash.fleet.targets import MAX_GPUS
from gpudash.history import FixedRing

STALE_ROUNDS = 3  # a host that missed this many rounds' worth of time is unreachable, no longer stale


class Source(Protocol):
    def round(self) -> FleetRound: ...

    def close(self) -> None: ...


@dataclass
class FleetSpec:
    """Where the fleet comes from, from the options or else the config's [fleet] table."""

    prometheus: str | None
    hosts: list[str]
    hostfile: str | None
    timeout_s: float
    concurrency: int
    interval: float  # 0: adapt to the fleet's size
    history_s: int
    ca_file: str | None = None
    memory_budget_mib: int = 256  # what all answers in flight may hold together (scrapes and Prometheus's API)
    max_hosts_per_target: int = 64
    max_devices_per_target: int = 1024
    expect_gpus: int | None = None  # GPUs each host should have, where its hostfile line does not say

    @property
    def configured(self) -> bool:
        return bool(self.prometheus or self.hosts or self.hostfile)


def spec_from(config: dict[str, Any], **options: Any) -> FleetSpec:
    """Options that were given win over config [fleet]; a source given on the command line replaces the
    config's source (hosts from the config are not added to --prometheus)."""
    conf = config["fleet"]
    _check_given(options)
    given = any(options.get(k) for k in ("prometheus", "hosts", "hostfile"))
    pick = (lambda name: options.get(name)) if given else (lambda name: options.get(name) or conf[name] or None)

    def value(name: str, key: str) -> Any:  # a value given (even 0, refused below) wins over the config's
        return options[name] if options.get(name) is not None else conf[key]

    spec = FleetSpec(
        prometheus=pick("prometheus"),
        hosts=list(pick("hosts") or []),
        hostfile=pick("hostfile"),
        timeout_s=value("timeout_s", "timeout_s"),
        concurrency=value("concurrency", "concurrency"),
        interval=value("interval", "interval"),
        history_s=conf["history_s"],
        ca_file=options.get("ca_file"),
        memory_budget_mib=conf["memory_budget_mib"],
        max_hosts_per_target=conf["max_hosts_per_target"],
        max_devices_per_target=conf["max_devices_per_target"],
        expect_gpus=options.get("expect_gpus"),
    )
    if spec.prometheus and (spec.hosts or spec.hostfile):
        raise UsageError("--prometheus reads the fleet from Prometheus: leave out --hosts/--hostfile (or the reverse)")
    if not 1 <= spec.concurrency <= 128:
        raise UsageError(f"--concurrency: expected 1 to 128 requests at once, got {spec.concurrency}")
    if not 0 < spec.timeout_s <= 60:
        raise UsageError(f"--timeout: expected seconds above 0, at most 60, got {spec.timeout_s:g}")
    return spec


def _check_given(options: dict[str, Any]) -> None:
    """What was given on the command line, checked before any work: one line naming the option."""
    hosts = options.get("hosts")
    if hosts is not None and not any(h.strip() for value in hosts for h in value.split(",")):
        raise UsageError(f"--hosts {','.join(hosts)!r}: names no endpoint; expected HOST:PORT,... e.g. gpu1:9483")
    ca_file = options.get("ca_file")
    if ca_file is not None:
        _check_ca_file(ca_file)
    gpus = options.get("expect_gpus")
    if gpus is not None and not 0 <= gpus <= MAX_GPUS:
        raise UsageError(f"--expect-gpus: expected a count from 0 to {MAX_GPUS}, got {gpus}")


def _check_ca_file(path: str) -> None:
    """A regular file (never a FIFO that would block) holding PEM certificates that ssl accepts."""
    import ssl

    from gpudash.fileio import check_input_file

    check_input_file(path, "--ca-file", "a PEM CA bundle")
    try:
        ssl.create_default_context(cafile=path)
    except (ssl.SSLError, ValueError) as exc:
        raise UsageError(f"--ca-file {path}: not a PEM CA bundle ssl can load: {exc}") from None
    except OSError as exc:
        raise UsageError(f"--ca-file {path}: cannot read it: {exc.strerror or exc}") from None


def open_source(spec: FleetSpec) -> tuple[Source, int]:
    """The source and how many endpoints it starts from (Prometheus: 0, it knows its own targets)."""
    if spec.prometheus:
        from gpudash.fleet.prometheus import PrometheusSource
        from gpudash.fleet.targets import parse_target

        parse_target(spec.prometheus, "--prometheus")  # one clear line for a malformed URL
        url = spec.prometheus if "://" in spec.prometheus else f"http://{spec.prometheus}"
        source = PrometheusSource(
            url,
            timeout_s=spec.timeout_s,
            ca_file=spec.ca_file,
            history_s=spec.history_s,
            expect_gpus=spec.expect_gpus,
            memory_budget_bytes=spec.memory_budget_mib * 2**20,
        )
        return source, 0
    if not (spec.hosts or spec.hostfile):
        raise UsageError(
            "no fleet to show: pass --prometheus URL, --hosts HOST:PORT,... or --hostfile FILE "
            "(or set them in the config's [fleet] table)"
        )
    from gpudash.fleet.scrape import Scraper
    from gpudash.fleet.targets import targets_from

    targets = targets_from(spec.hosts, spec.hostfile)
    if not targets:
        where = f"--hostfile {spec.hostfile}" if spec.hostfile else "--hosts (or config fleet.hosts)"
        raise UsageError(f"{where}: lists no endpoint")
    every = refresh_interval(len(targets), spec.interval)
    scraper = Scraper(
        targets,
        concurrency=spec.concurrency,
        timeout_s=spec.timeout_s,
        stale_after_s=max(STALE_ROUNDS * every, 3 * spec.timeout_s),
        ca_file=spec.ca_file,
        memory_budget_bytes=spec.memory_budget_mib * 2**20,
        max_hosts_per_target=spec.max_hosts_per_target,
        max_devices_per_target=spec.max_devices_per_target,
        expect_gpus=spec.expect_gpus,
    )
    return scraper, len(targets)


def find_host(fleet: FleetRound, name: str) -> Host:
    host = fleet.host(name)
    if host is None:
        known = ", ".join(h.name for h in fleet.hosts[:20]) or "none"
        raise UsageError(f"--host {name}: not in the fleet (hosts: {known})")
    return host


def one_round(spec: FleetSpec, host: str | None = None) -> tuple[FleetRound, Host | None]:
    """One round (and, for `host`, its history when Prometheus keeps one)."""
    source, _ = open_source(spec)
    try:
        fleet = source.round()
        chosen = find_host(fleet, host) if host else None
        if chosen is not None and hasattr(source, "history"):
            source.history(chosen)
        return fleet, chosen
    finally:
        source.close()


def operator_view(fleet: FleetRound, filter_text: str | None = None, sort: str | None = None) -> FleetRound:
    """The round as an operator asked for it: only what `--filter` lets through, in `--sort`'s order (a bad
    filter or key is one line, UsageError)."""
    from gpudash.fleet.filter import apply_filter, parse_filter, sort_hosts

    if filter_text:
        fleet = apply_filter(fleet, parse_filter(filter_text))
    return sort_hosts(fleet, sort) if sort else fleet


def document(fleet: FleetRound) -> dict[str, Any]:
    """`gpudash fleet --json`: the round, with the operators' view: totals by model, drift, memory per user and
    job (gpudash/contracts/fleet.schema.json)."""
    from gpudash.fleet.drift import drift
    from gpudash.fleet.totals import by_model, usage

    doc = fleet.to_json()
    doc["totals"] = [t.to_json() for t in by_model(fleet)]
    doc["drift"] = [d.to_json() for d in drift(fleet)]
    doc["users"] = [u.to_json() for u in usage(fleet, "user")]
    doc["jobs"] = [u.to_json() for u in usage(fleet, "job")]
    return doc


def healthy(fleet: FleetRound) -> bool:
    """Every host up: answering, with its GPUs (none lost, none missing) or expected to have none."""
    return all(h.status == UP for h in fleet.hosts)


class UtilisationHistory:
    """What a scraping view remembers between rounds: each device's utilisation over the last `points` rounds
    of its host, as whole percentages in a byte each (NO_READING where the round had none) and the round times
    once per host, in rings allocated once (gpudash.history.FixedRing), so 128 hosts x 8 GPUs x 120 rounds hold
    about 0.5 MB and recording a round allocates nothing; hosts that leave the fleet are forgotten."""

    NO_READING = -1

    def __init__(self, points: int = 120) -> None:
        self.points = points
        self._times: dict[str, FixedRing] = {}
        self._series: dict[tuple[str, str], FixedRing] = {}

    def record(self, fleet: FleetRound) -> None:
        for host in fleet.hosts:
            if host.status != UP:
                continue
            times = self._times.get(host.name)
            if times is None:
                times = self._times[host.name] = FixedRing(self.points, "d")
            times.append(fleet.started)
            for device in host.devices:
                ring = self._series.get((host.name, device.id))
                if ring is None:
                    ring = self._series[(host.name, device.id)] = FixedRing(self.points, "b", self.NO_READING)
                u = device.utilization_ratio  # 0..1: the fleet's readers drop anything else
                ring.append(self.NO_READING if u is None else round(u * 100))
        present = {h.name for h in fleet.hosts}
        for name in [n for n in self._times if n not in present]:
            del self._times[name]
        for key in [k for k in self._series if k[0] not in present]:
            del self._series[key]

    def fill(self, host: Host) -> None:
        ring = self._times.get(host.name)
        times = ring.values() if ring is not None else []
        for device in host.devices:
            if device.history:
                continue
            series = self._series.get((host.name, device.id))
            values = series.values() if series is not None else []
            pairs = zip(times[len(times) - len(values) :], values)  # a device seen later: the newest rounds
            device.history = [(t, v / 100) for t, v in pairs if v != self.NO_READING]
