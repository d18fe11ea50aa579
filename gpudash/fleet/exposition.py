"""The Prometheus text format, read with prometheus_client's parser, and the devices it describes.

Exporters publish far more than the fleet shows (dcgm-exporter ~200 samples per 8-GPU node), and the parser
costs tens of microseconds a sample, most of it reading the label set, while a host sends the same series
every round. So a line is split at its label set's closing brace into head (name and labels) and value; the
head is looked up in a bounded cache (SeriesCache) that holds, per wanted series, its labels as
prometheus_client parsed them the first time and what they say (host, device, reading); lines of unwanted
series are dropped by their name before any parsing.

The scraper parses off its event loop (in one parser thread), each answer bounded twice: by a deadline, checked
every few thousand lines, and by the target's claims (gpudash.fleet.claims), which drop the series of hosts and
devices beyond the target's bounds before they are kept or cached. A 30 MiB page of 57,351 hosts took 16.95 s
against a 5 s deadline when parsing ran on the loop (issue 27).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from gpudash.fleet.model import Device, FailedBefore, Host, Usage
from gpudash.fleet.series import FAILED_BEFORE, HOST_INFO, USAGE, WANTED, Series, describe, identity, plausible
from gpudash.health.catalog import SEVERITIES
from gpudash.plain_text import one_line

Sample = tuple[Series, float]


def _series_name(head: str) -> str:
    """The name at the start of a sample line's head: up to its label set or the end."""
    brace = head.find("{")
    return head if brace < 0 else head[:brace]


def clean_labels(labels: dict[str, str]) -> dict[str, str]:
    """Label values as gpudash may show them: an exporter is another machine's program, and a host or model name
    with an escape sequence must not recolour or retitle the user's terminal (gpudash.plain_text)."""
    return {one_line(k, 200): one_line(v, 500) for k, v in labels.items()}


class SeriesCache:
    """Series already read, by the text before their value (name and label set), and label sets by their text;
    each is cleared when it holds `limit` entries, so memory stays flat whatever an exporter sends."""

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._series: dict[str, Series] = {}
        self._labels: dict[str, dict[str, str]] = {}

    def series(self, line: str, head: str, admit: Callable[[Series], bool] | None = None) -> Series | str | None:
        """The wanted series `head` names, or just its name when the fleet does not read it (not kept); None
        when `admit` refuses it (a host or device beyond its target's bounds: not kept either)."""
        found = self._series.get(head)
        if found is not None:
            return found if admit is None or admit(found) else None
        name = _series_name(head)
        if name not in WANTED:
            return name
        block = head[len(name) :]
        if block and not (block[0] == "{" and block[-1] == "}"):
            raise ValueError(f"unclosed label set: {line[:120]!r}")
        labels = self._labels.get(block) if block else {}
        parsed = labels is None
        found = describe(name, self._parse_labels(line) if labels is None else labels)
        if admit is not None and not admit(found):
            return None
        if parsed:
            if len(self._labels) >= self.limit:
                self._labels.clear()
            self._labels[block] = found.labels
        if len(self._series) >= self.limit:
            self._series.clear()
        self._series[head] = found
        return found

    @staticmethod
    def _parse_labels(line: str) -> dict[str, str]:
        families = list(text_string_to_metric_families(line + "\n"))
        if not families or not families[0].samples:
            raise ValueError(f"unreadable sample line: {line[:120]!r}")
        return clean_labels(families[0].samples[0].labels)


def _lines(text: str) -> Iterator[str]:
    """The lines of `text` one by one, without a list of them all or a copy of the text (io.StringIO keeps 4
    bytes a character: 120 MB for a 30 MiB page)."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end].rstrip("\r")
        start = end + 1
    if start < len(text):
        yield text[start:].rstrip("\r")


class TooLate(ValueError):
    """Parsing reached its deadline."""


CHECK_EVERY = 4096  # lines between two looks at the clock


def parse(
    text: str,
    wanted: frozenset[str] = WANTED,
    cache: SeriesCache | None = None,
    admit: Callable[[Series], bool] | None = None,
    deadline: float | None = None,
) -> list[Sample]:
    """(series, value) of the wanted series that `admit` lets in; raises ValueError on a malformed exposition,
    TooLate once time.monotonic() passes `deadline`."""
    cache = cache if cache is not None else SeriesCache()
    out: list[Sample] = []
    for number, line in enumerate(_lines(text)):
        if deadline is not None and number % CHECK_EVERY == 0 and time.monotonic() > deadline:
            raise TooLate(f"parsing stopped at its deadline after {number} lines")
        if not line or line[0] == "#":
            continue
        end = line.rfind("}") + 1  # values and timestamps hold no "}": the last one ends the label set
        if end:
            head, rest = line[:end], line[end:]
        else:
            head, _, rest = line.partition(" ")
        found = cache.series(line, head, admit)
        if found is None or isinstance(found, str) or found.name not in wanted:
            continue
        fields = rest.split()
        if not fields:
            raise ValueError(f"sample without a value: {line[:120]!r}")
        out.append((found, float(fields[0])))
    return out


def group_by_host(samples: Iterable[Sample], default_host: str) -> dict[str, list[Sample]]:
    """Samples by the host their labels name. Series without a host label (all-smi's per-process series) belong
    to the one host the rest of the answer names, else to the target's address."""
    hosts: dict[str, list[Sample]] = {}
    unnamed: list[Sample] = []
    for sample in samples:
        if sample[0].host is None:
            unnamed.append(sample)
        else:
            hosts.setdefault(sample[0].host, []).append(sample)
    if unnamed:
        owner = next(iter(hosts)) if len(hosts) == 1 else default_host
        hosts.setdefault(owner, []).extend(unnamed)
    return hosts


def read_host(host: Host, samples: Iterable[Sample], origin: dict[int, str] | None = None) -> None:
    """Fill `host` from its samples: its devices (every exporter's view of a GPU merged), whether gpudash said
    the data is replayed from a snapshot rather than this host's hardware, and the machine's own health checks.
    `origin`: the target each sample came from, by id(sample), listed in each device's `targets`."""
    found: dict[str, Device] = {}
    extra: dict[str, dict[str, float]] = {}
    replayed = False
    host_checks: dict[str, str] = {}
    versions: dict[str, str] = {}
    usage: list[Usage] = []
    failed: dict[tuple[str, str], dict[str, Any]] = {}  # (UUID, check ID) -> what the memory's series said
    for sample in samples:
        series, value = sample
        name, labels = series.name, series.labels
        if name in FAILED_BEFORE:
            _failed_before(failed, name, labels, value)
            continue
        if name == "gpudash_machine_info":
            replayed = replayed or labels.get("replayed") == "true"
            _versions(versions, labels, MACHINE_VERSIONS)
            continue
        if name in HOST_INFO:
            _versions(versions, labels, NVITOP_VERSIONS)
            continue
        if name in USAGE:
            found_usage = _usage(series, value)
            if found_usage is not None:
                usage.append(found_usage)
            continue
        if "DCGM_FI_DRIVER_VERSION" in labels:
            versions.setdefault("driver", labels["DCGM_FI_DRIVER_VERSION"])
        ident = series.device
        if ident is None:
            if name == "gpudash_health_check_status" and labels.get("device_key") == "host":
                _health(host_checks, labels, value)
            continue
        device = found.get(ident.key)
        if device is None:
            device = found[ident.key] = Device(f"{ident.vendor}:{ident.index}", ident.vendor, ident.index)
            device.key = ident.key
            if ident.instance is not None:  # a MIG instance: its own row under the GPU
                device.id += f"/mig{ident.instance}"
                device.mig_instance, device.mig_profile = ident.instance, ident.profile
        device.name = device.name or ident.name
        device.uuid = device.uuid or ident.uuid
        device.vbios = device.vbios or labels.get("DCGM_FI_DEV_VBIOS_VERSION") or None
        if series.source not in device.sources:
            device.sources.append(series.source)
        said = origin.get(id(sample)) if origin else None
        if said is not None and said not in device.targets:
            device.targets.append(said)
        reading = series.reading
        if reading is not None:
            scaled = plausible(reading.field, value * reading.scale)
            if scaled is None:
                continue  # NaN, infinite or out of range: no reading
            if reading.field.startswith("memory_") and reading.field not in ("memory_used_bytes", "memory_total_bytes"):
                extra.setdefault(ident.key, {})[reading.field] = scaled
            elif getattr(device, reading.field) is None or reading.source != "gpudash":
                setattr(device, reading.field, scaled)  # a vendor exporter's reading wins
        elif name == "gpudash_device_lost":
            device.lost = bool(device.lost) or value == 1
        elif name == "gpudash_health_check_status":
            _health(device.health_checks, labels, value)
        elif name == "gpudash_health_timestamp_seconds":
            device.health_read = True
        elif name == "gpudash_precision_verified" and labels.get("precision"):
            device.verified[labels["precision"]] = value == 1
        elif name == "gpudash_recommendation_info":
            device.amp_dtype = labels.get("amp_dtype") or None
        elif name == "gpudash_check_results" and labels.get("status") in ("fail", "error"):
            if math.isfinite(value) and 0 <= value < 2**31:
                device.checks_failed = (device.checks_failed or 0) + int(value)
        elif name == "gpudash_device_info":
            device.name = labels.get("name") or device.name
            device.vbios = device.vbios or labels.get("vbios_version") or None  # gpudash serve's own reading
    for key, parts in extra.items():  # dcgm-exporter gives used + free (+ reserved), not the total; its used won
        device = found[key]
        if device.memory_used_bytes is not None and "memory_free_bytes" in parts:
            device.memory_total_bytes = (
                device.memory_used_bytes + parts["memory_free_bytes"] + parts.get("memory_reserved_bytes", 0.0)
            )
    host.devices = sorted(
        found.values(),
        key=lambda d: (
            d.vendor == "cpu",
            d.vendor,
            _number(d.index),
            (-1, "") if d.mig_instance is None else _number(d.mig_instance),
        ),
    )  # a GPU's MIG instances right after it
    host.replayed, host.host_checks, host.usage = replayed, host_checks, usage
    host.failed_before = _remembered_failures(host, failed)
    vbios = sorted({d.vbios for d in host.devices if d.vbios})
    if vbios:
        versions["vbios"] = ",".join(vbios)
    host.versions = versions


def add_batch(host: Host, batch: dict[str, Device]) -> None:
    """Copy gpudash's batch results (verified precisions, recommended dtype, failed checks, its name of the
    device), read apart into `batch` by device key, onto the host's devices."""
    if not batch:
        return
    for device in host.devices:
        said = batch.get(device.key)
        if said is None:
            continue
        device.verified = said.verified
        device.amp_dtype = said.amp_dtype
        device.checks_failed = said.checks_failed
        device.name = said.name or device.name
        if "gpudash" not in device.sources:
            device.sources.append("gpudash")


MACHINE_VERSIONS = {  # gpudash_machine_info's labels -> the drift view's names
    "driver_version": "driver",
    "cuda_version": "cuda",
    "hip_version": "rocm",
    "torch_version": "torch",
    "gpudash_version": "gpudash",
}
NVITOP_VERSIONS = {"driver_version": "driver", "cuda_driver_version": "cuda"}


def _versions(found: dict[str, str], labels: dict[str, str], names: dict[str, str]) -> None:
    for label, key in names.items():
        if labels.get(label):
            found.setdefault(key, labels[label])


def _usage(series: Series, value: float) -> Usage | None:
    """One user's or job's memory on a GPU, from whichever exporter labelled it."""
    scale = USAGE[series.name][1]
    memory = plausible("memory_used_bytes", value * scale)
    if memory is None:
        return None
    labels = series.labels
    gpu = (
        labels.get("UUID")
        or labels.get("uuid")
        or labels.get("device_uuid")
        or labels.get("device_key")
        or labels.get("gpu_index")
        or "?"
    )
    user = labels.get("job_user") or labels.get("username") or labels.get("user") or None
    job = labels.get("hpc_job") or None
    if job is None and labels.get("pod"):
        job = f"{labels.get('namespace') or 'default'}/{labels['pod']}"
    return Usage(gpu, memory, user, job)


def _health(checks: dict[str, str], labels: dict[str, str], value: float) -> None:
    """gpudash_health_check_status is an enum: the series of the result's severity has the value 1."""
    check, severity = labels.get("check_id"), labels.get("severity")
    if value == 1 and check and severity in SEVERITIES:
        checks[check] = severity


def _failed_before(failed: dict[tuple[str, str], dict[str, Any]], name: str, labels: dict[str, str], value: float):
    uuid, check = labels.get("UUID") or labels.get("uuid"), labels.get("check_id")
    if not uuid or not check or not math.isfinite(value) or value < 0:
        return
    said = failed.setdefault((uuid, check), {})
    if name == "gpudash_health_failed_before_sightings":
        said["sightings"] = int(value) if value < 2**31 else None
    elif labels.get("severity") in SEVERITIES:
        said["last"], said["severity"] = value, labels["severity"]


def _remembered_failures(host: Host, failed: dict[tuple[str, str], dict[str, Any]]) -> list[FailedBefore]:
    """The host's memory of bad GPUs, each put on the row its GPU has now (by UUID), most recent first."""
    rows = {d.uuid: d for d in host.devices if d.uuid and d.mig_instance is None}
    out = []
    for (uuid, check), said in failed.items():
        if "last" not in said:
            continue
        row = rows.get(uuid)
        entry = FailedBefore(
            uuid, check, said["severity"], said["last"], said.get("sightings"), host.name, row.id if row else None
        )
        out.append(entry)
        if row is not None:
            row.failed_before.append(entry)
    for row in rows.values():
        row.failed_before.sort(key=lambda f: f.last, reverse=True)
    return sorted(out, key=lambda f: f.last, reverse=True)


def _number(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def identity_from_labels(labels: dict[str, str]) -> str | None:
    """A device's id ("nvidia:3") from labels alone, for query results whose metric name PromQL dropped."""
    if labels.get("device_key"):
        return labels["device_key"]
    if labels.get("gpu_id"):
        return f"amd:{labels['gpu_id']}"
    if labels.get("devicename") and labels.get("index"):  # nvitop-exporter
        return f"nvidia:{labels['index']}"
    if labels.get("gpu_index"):  # all-smi
        found = identity("all_smi_gpu_utilization", labels)
        return f"{found.vendor}:{found.index}" if found else None
    if labels.get("gpu"):
        return f"nvidia:{labels['gpu']}"
    return None
