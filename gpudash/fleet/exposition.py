"""The Prometheus text format, read with prometheus_client's parser, and the devices it describes.

Exporters publish far more than the fleet shows (dcgm-exporter ~200 samples per 8-GPU node), and the parser
costs tens of microseconds a sample, most of it reading the label set, so two things keep a round cheap:
lines of unwanted series are dropped by a string split before any parsing, and a label set (`{...}`) is
parsed by prometheus_client the first time it is seen and then looked up, since a host sends the same label
sets every round (LabelCache, bounded).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families

from gpudash.fleet.model import Device
from gpudash.fleet.series import LIVE, WANTED, hostname, identity, plausible, source_of
from gpudash.plain_text import one_line

Sample = tuple[str, dict[str, str], float]


def _series_name(line: str) -> str:
    if line.startswith("#"):
        parts = line.split(None, 3)  # "# TYPE name gauge" / "# HELP name text"
        return parts[2] if len(parts) > 2 else ""
    end = len(line)
    for stop in ("{", " "):
        i = line.find(stop)
        if 0 <= i < end:
            end = i
    return line[:end]


def wanted_lines(text: str, wanted: frozenset[str] = WANTED) -> str:
    return "\n".join(line for line in text.splitlines() if line and _series_name(line) in wanted) + "\n"


def clean_labels(labels: dict[str, str]) -> dict[str, str]:
    """Label values as gpudash may show them: an exporter is another machine's program, and a host or model name
    with an escape sequence must not recolour or retitle the user's terminal (gpudash.plain_text)."""
    return {one_line(k, 200): one_line(v, 500) for k, v in labels.items()}


class LabelCache:
    """Label sets already parsed, by their text; cleared when it holds `limit` of them (memory stays flat)."""

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._seen: dict[str, dict[str, str]] = {}

    def labels(self, line: str, block: str) -> dict[str, str]:
        found = self._seen.get(block)
        if found is None:
            families = list(text_string_to_metric_families(line + "\n"))
            if not families or not families[0].samples:
                raise ValueError(f"unreadable sample line: {line[:120]!r}")
            found = clean_labels(families[0].samples[0].labels)
            if len(self._seen) >= self.limit:
                self._seen.clear()
            self._seen[block] = found
        return found


def parse(text: str, wanted: frozenset[str] = WANTED, cache: LabelCache | None = None) -> list[Sample]:
    """(name, labels, value) of the wanted series; raises ValueError on a malformed exposition."""
    cache = cache if cache is not None else LabelCache()
    out: list[Sample] = []
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        name = _series_name(line)
        if name not in wanted:
            continue
        if line[len(name) : len(name) + 1] == "{":
            head, brace, rest = line.rpartition("}")  # values and timestamps hold no "}": this ends the labels
            if not brace:
                raise ValueError(f"unclosed label set: {line[:120]!r}")
            labels = cache.labels(line, head[len(name) :])
        else:
            labels, rest = {}, line[len(name) :]
        fields = rest.split()
        if not fields:
            raise ValueError(f"sample without a value: {line[:120]!r}")
        out.append((name, labels, float(fields[0])))
    return out


def group_by_host(samples: Iterable[Sample], default_host: str) -> dict[str, list[Sample]]:
    hosts: dict[str, list[Sample]] = {}
    for sample in samples:
        hosts.setdefault(hostname(sample[1]) or default_host, []).append(sample)
    return hosts


def devices(samples: Iterable[Sample]) -> tuple[list[Device], bool]:
    """One host's samples as devices (every exporter's view of a GPU merged), and whether gpudash said the
    data is replayed from a snapshot rather than this host's hardware."""
    found: dict[str, Device] = {}
    extra: dict[str, dict[str, float]] = {}
    replayed = False
    for name, labels, value in samples:
        if name == "gpudash_machine_info":
            replayed = replayed or labels.get("replayed") == "true"
            continue
        ident = identity(name, labels)
        if ident is None:
            continue
        device = found.get(ident.key)
        if device is None:
            device = found[ident.key] = Device(f"{ident.vendor}:{ident.index}", ident.vendor, ident.index)
        device.name = device.name or ident.name
        device.uuid = device.uuid or ident.uuid
        source = source_of(name)
        if source not in device.sources:
            device.sources.append(source)
        reading = LIVE.get(name)
        if reading is not None:
            scaled = plausible(reading.field, value * reading.scale)
            if scaled is None:
                continue  # NaN, infinite or out of range: no reading
            if reading.field.startswith("memory_") and reading.field not in ("memory_used_bytes", "memory_total_bytes"):
                extra.setdefault(ident.key, {})[reading.field] = scaled
            elif getattr(device, reading.field) is None or reading.source != "gpudash":
                setattr(device, reading.field, scaled)  # a vendor exporter's reading wins
        elif name == "gpudash_precision_verified" and labels.get("precision"):
            device.verified[labels["precision"]] = value == 1
        elif name == "gpudash_recommendation_info":
            device.amp_dtype = labels.get("amp_dtype") or None
        elif name == "gpudash_check_results" and labels.get("status") in ("fail", "error"):
            if math.isfinite(value) and 0 <= value < 2**31:
                device.checks_failed = (device.checks_failed or 0) + int(value)
        elif name == "gpudash_device_info":
            device.name = labels.get("name") or device.name
    for key, parts in extra.items():  # dcgm-exporter gives used + free (+ reserved), not the total; its used won
        device = found[key]
        if device.memory_used_bytes is not None and "memory_free_bytes" in parts:
            device.memory_total_bytes = (
                device.memory_used_bytes + parts["memory_free_bytes"] + parts.get("memory_reserved_bytes", 0.0)
            )
    ordered = sorted(found.values(), key=lambda d: (d.vendor == "cpu", d.vendor, _number(d.index)))
    return ordered, replayed


def _number(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def identity_from_labels(labels: dict[str, str]) -> str | None:
    """A device's id ("nvidia:3") from labels alone, for query results whose metric name PromQL dropped."""
    if labels.get("device_key"):
        return labels["device_key"]
    if labels.get("gpu_id"):
        return f"amd:{labels['gpu_id']}"
    if labels.get("gpu"):
        return f"nvidia:{labels['gpu']}"
    return None
