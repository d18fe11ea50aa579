"""Read the fleet from a Prometheus server: what dcgm-exporter, AMD's exporter, nvitop-exporter, all-smi and
gpudash serve published.

A round makes its calls at once on the fleet's event-loop thread (gpudash.fleet.io_loop), each with the
round's deadline: an instant query per metric name the fleet shows (gpudash's batch results once a minute) and
/api/v1/targets for each target's health, last scrape and last error. A host's status comes from its
targets: up (all healthy and recently scraped), stale (some down, or Prometheus has not scraped it for three
intervals: the values shown are the last ones), unreachable (all down; Prometheus's error shown). Servers
that do not offer /api/v1/targets (some query front-ends) are read through the `up` series instead. A
host's history comes from query_range.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import time
import urllib.parse
from collections import deque
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from time import process_time
from typing import Any

from gpudash.errors import GpudashError
from gpudash.fleet import exposition, json_rows
from gpudash.fleet.budget import MemoryBudget
from gpudash.fleet.fetch import FetchError, fetch_bytes
from gpudash.fleet.gc_pause import after_round, collector_paused
from gpudash.fleet.interval import within_cpu_share
from gpudash.fleet.io_loop import IoLoop
from gpudash.fleet.model import STALE, UNREACHABLE, UP, Device, FleetRound, Host
from gpudash.fleet.series import ALL_SMI, BATCH, WANTED, Series, describe, plausible
from gpudash.fleet.verdict import judge
from gpudash.plain_text import one_line

STALE_INTERVALS = 3
ENUM = "gpudash_health_check_status"
MIN_INTERVAL_S = 5.0  # the Fleet tab's pace over Prometheus, unless the config's fleet.interval says
BATCH_EVERY_S = 60.0  # gpudash's batch results (probe verdicts, recommendation, checks) change rarely
API_MAX_BYTES = 128 * 2**20  # one answer of the Prometheus the user named (a scraped page: 32 MiB)
SERIES_CACHED = 500_000  # label sets remembered between rounds (1,024 hosts x 8 GPUs hold about 280,000)
# One instant query per metric name, made at once: for 1,024 hosts x 8 GPUs, one query for every name answered
# over 32 MiB (fleet.fetch.MAX_BYTES); one name's answer is about 3 MiB.
BATCH_NAMES = tuple(sorted(n for n in BATCH if n != "gpudash_machine_info"))
LIVE_NAMES = tuple(sorted(WANTED - {ENUM} - set(BATCH_NAMES)))
# gpudash serve's readings of a GPU that dcgm-exporter reads too are never shown (a vendor exporter's reading
# wins: gpudash.fleet.exposition), so Prometheus leaves them out of the answer: for 1,024 hosts x 8 GPUs with
# both exporters, 41,000 of the round's 98,000 rows. Matched on UUID (NVIDIA only: AMD GPUs have none in
# common), and only where dcgm's reading is a number (`>= 0` drops NaN), so gpudash still fills in for it.
COVERED_BY_DCGM = {
    "gpudash_device_utilization_ratio": "DCGM_FI_DEV_GPU_UTIL >= 0",
    "gpudash_device_memory_used_bytes": "DCGM_FI_DEV_FB_USED >= 0",
    # dcgm's total is used + free; the used is dcgm's or, where dcgm has none, gpudash's (kept by the line above)
    "gpudash_device_memory_total_bytes": "DCGM_FI_DEV_FB_FREE >= 0",
    "gpudash_device_temperature_celsius": "DCGM_FI_DEV_GPU_TEMP >= 0",
    "gpudash_device_power_watts": "DCGM_FI_DEV_POWER_USAGE >= 0",
}


def live_query(name: str) -> str:
    """The instant query for one live name: all its series, less gpudash's readings dcgm-exporter has."""
    query = f'{{__name__=~"{name}"}}'
    covered = COVERED_BY_DCGM.get(name)
    return f"{query} unless on(UUID) ({covered})" if covered else query


def _duration_s(text: str | None) -> float | None:
    """Prometheus durations as the targets API writes them ("15s", "1m", "1m30s")."""
    if not text:
        return None
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    total, found = 0.0, False
    for number, unit in re.findall(r"(\d+)(ms|s|m|h|d)", text):
        total, found = total + int(number) * units[unit], True
    return total if found else None


def _time(text: str | None) -> float | None:
    """RFC 3339 with nanoseconds ("2026-11-23T20:21:10.123456789Z") as Unix seconds."""
    if not text or text.startswith("0001-"):
        return None
    match = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", text)
    if not match:
        return None
    base = datetime.fromisoformat(match.group(1) + ("+00:00" if match.group(3) == "Z" else match.group(3)))
    return base.timestamp() + float(match.group(2) or 0)


def _instance_host(instance: str) -> str:
    parts = urllib.parse.urlsplit(f"//{instance}")
    return parts.hostname or instance


def promql_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class PrometheusSource:
    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 4.0,
        ca_file: str | None = None,
        history_s: int = 900,
        expect_gpus: int | None = None,
        memory_budget_bytes: int = 256 * 2**20,
    ):
        self.url = url.rstrip("/")
        # What the API answers in flight may hold together (fleet.memory_budget_mib), as a direct scrape's do.
        self.budget = MemoryBudget(memory_budget_bytes)
        self.expect_gpus = expect_gpus  # GPUs each host should have (--expect-gpus); None: not said
        self.timeout_s, self.ca_file, self.history_s = timeout_s, ca_file, history_s
        self._io = IoLoop("fleet-prometheus")
        self._series: dict[tuple, Series] = {}
        self.scrape_every_s = MIN_INTERVAL_S  # the pace worth reading at: the targets' median scrape interval
        self.interval_s = MIN_INTERVAL_S  # that, or longer while rounds cost more CPU than CPU_SHARE of it
        self._round_cpu: deque[float] = deque(maxlen=4)  # CPU seconds of the last rounds, the first left out
        self._batch_devices: dict[str, dict[str, Device]] = {}  # the last batch results, by host and device key
        self._batch_at: float | None = None
        self._rounds = 0
        # Whether a round ends by freezing what it keeps (gc_pause.refreeze). The Fleet tab turns it off: it
        # freezes (or reclaims) itself once a round is prepared, and a second freeze here would only repeat it.
        self.refreezes = True

    def close(self) -> None:
        self._io.close()

    def _wait(self, calls: Any) -> Any:
        """Run `calls` (a coroutine) on the event-loop thread; each request has its own deadline, this one is
        the last resort."""
        done = self._io.submit(calls)
        try:
            return done.result(timeout=self.timeout_s * 2)
        except FutureTimeout:
            done.cancel()
            raise GpudashError(f"Prometheus at {self.url}: no answer within {self.timeout_s * 2:g} s") from None

    async def _api(self, path: str, **params: str) -> Any:
        url = f"{self.url}/api/v1/{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        hold = self.budget.hold()
        try:
            answer = await fetch_bytes(
                url,
                self.timeout_s,
                self.ca_file,
                "application/json",
                self._io.connections,
                hold=hold,
                max_bytes=API_MAX_BYTES,
            )
            body = json_rows.decode(answer)  # row by row when large: the UI thread is never held for long
        except FetchError as exc:
            raise GpudashError(f"Prometheus at {self.url}: {exc}") from None
        except ValueError:
            raise GpudashError(f"Prometheus at {self.url}: /api/v1/{path} did not answer JSON") from None
        finally:
            hold.release()  # decoded (or given up): the raw answer is no longer held
        if body.get("status") != "success":
            raise GpudashError(f"Prometheus at {self.url}: {body.get('errorType')}: {body.get('error')}")
        return body["data"]

    async def _targets(self) -> list[dict[str, Any]]:
        try:
            return [
                {
                    "instance": one_line(t["labels"].get("instance", ""), 500),
                    "job": t["labels"].get("job", ""),
                    "healthy": t.get("health") == "up",
                    "error": one_line(t.get("lastError") or "", 500)
                    or ("not scraped yet" if t.get("health") == "unknown" else None),
                    "last": _time(t.get("lastScrape")),
                    "every": _duration_s(t.get("scrapeInterval")),
                }
                for t in (await self._api("targets", state="active"))["activeTargets"]
            ]
        except GpudashError:
            up = (await self._api("query", query="up"))["result"]
            return [
                {
                    "instance": r["metric"].get("instance", ""),
                    "job": r["metric"].get("job", ""),
                    "healthy": r["value"][1] == "1",
                    "error": None if r["value"][1] == "1" else "down (Prometheus's up == 0)",
                    "last": float(r["value"][0]),
                    "every": None,
                }
                for r in up
            ]

    def round(self) -> FleetRound:
        cpu = process_time()
        with collector_paused():  # the round's answers are garbage once it ends: no full collections meanwhile
            fleet = self._round()
        self._rounds += 1
        # From the second round full collections stop walking the label sets, and then (refreezes) each
        # round's hosts and devices: gc_pause.settle and refreeze.
        after_round(self._rounds, self.refreezes)
        cpu = process_time() - cpu  # the round's, its collection's included
        if self._rounds > 1:  # the first pays for imports and connections
            self._round_cpu.append(cpu)
        spent = sum(self._round_cpu) / len(self._round_cpu) if self._round_cpu else 0.0
        self.interval_s = within_cpu_share(self.scrape_every_s, spent)
        return fleet

    def _round(self) -> FleetRound:
        started, t0 = time.time(), time.monotonic()
        batch = self._batch_at is None or started - self._batch_at >= BATCH_EVERY_S
        queries = [(live_query(name), False) for name in LIVE_NAMES]
        # The health enum has a series per severity, only one of them 1, and most results are OK: ask for the
        # results that are not OK, and for each GPU's health timestamp, which says its checks ran (so: OK unless
        # a finding says otherwise). 1,024 hosts x 8 GPUs x 12 checks answered 45 MB; this, under 4 MB.
        queries.append((f'{ENUM}{{severity!="OK"}} == 1', False))
        if batch:
            queries += [(f'{{__name__=~"{name}"}}', True) for name in BATCH_NAMES]

        async def all_of_them() -> list[Any]:
            return await asyncio.gather(self._targets(), *(self._api("query", query=q) for q, _ in queries))

        listed, *found = self._wait(all_of_them())
        live: list[tuple[Series, float]] = []
        batch_samples: list[tuple[Series, float]] = []
        for answer, (_, is_batch) in zip(found, queries):
            self._read(answer["result"], batch_samples if is_batch else live)
        if batch:
            self._batch_devices, self._batch_at = self._batch_facts(batch_samples), started
        everies = sorted(t["every"] for t in listed if t["every"])
        if everies:  # a series in Prometheus changes only when it scrapes: reading it faster shows nothing new
            self.scrape_every_s = max(MIN_INTERVAL_S, everies[len(everies) // 2])
        hosts = self._hosts(live, listed, time.time())
        return FleetRound(
            {"kind": "prometheus", "url": self.url}, hosts, started, time.monotonic() - t0, self.timeout_s
        )

    def _read(self, result: list[dict[str, Any]], into: list) -> None:
        """The samples of one instant query's result. A fleet's series are the same round after round: each is
        read once (its labels cleaned, what they say worked out) and looked up by its label set after that."""
        cache = self._series
        for r in result:
            metric = r["metric"]
            key = tuple(metric.items())
            series = cache.get(key)
            if series is None:
                labels = exposition.clean_labels(metric)
                series = describe(labels.pop("__name__", ""), labels)
                if series.source == ALL_SMI and "exported_instance" not in labels:
                    # all-smi's own `instance` became `exported_instance`; a series that had none (its per-process
                    # ones) carries only the target's: its host is the one its target's other series name.
                    series = dataclasses.replace(series, host=None)
                if len(cache) >= SERIES_CACHED:
                    cache.clear()
                cache[key] = series
            value = float(r["value"][1])
            if math.isfinite(value):
                into.append((series, value))

    def _batch_facts(self, samples: list) -> dict[str, dict[str, Device]]:
        """gpudash's batch results read into devices once per batch query, by host and device key, so a round
        only copies them onto its devices (read every round, they were 90,000 of 190,000 samples of 1,024
        hosts x 8 GPUs)."""
        grouped: dict[str, list] = {}
        for sample in samples:
            grouped.setdefault(sample[0].host or _instance_host(sample[0].labels.get("instance", "?")), []).append(
                sample
            )
        found = {}
        for name, group in grouped.items():
            holder = Host(name, UP)
            exposition.read_host(holder, group)
            found[name] = {d.key: d for d in holder.devices}
        return found

    def _hosts(self, samples: list, targets: list[dict[str, Any]], now: float) -> list[Host]:
        by_instance: dict[str, str] = {}
        grouped: dict[str, list] = {}
        for sample in samples:  # the host each target's series name (all-smi's per-process series name none)
            if sample[0].host:
                by_instance.setdefault(sample[0].labels.get("instance", ""), sample[0].host)
        for sample in samples:
            instance = sample[0].labels.get("instance", "")
            name = sample[0].host or by_instance.get(instance) or _instance_host(instance or "?")
            by_instance.setdefault(instance, name)
            grouped.setdefault(name, []).append(sample)
        hosts: dict[str, Host] = {}
        verdicts: dict[str, list[str]] = {}
        for t in targets:
            name = by_instance.get(t["instance"]) or _instance_host(t["instance"])
            host = hosts.setdefault(name, Host(name, UP))
            host.targets.append(f"{t['job']}/{t['instance']}")
            late = t["every"] is not None and t["last"] is not None and now - t["last"] > STALE_INTERVALS * t["every"]
            status = UP if t["healthy"] and not late else STALE if t["healthy"] else UNREACHABLE
            error = t["error"] or (f"last scraped {now - t['last']:.0f} s ago" if late else None)
            if error and status != UP:
                host.error = f"{host.error}; " if host.error else ""
                host.error += f"{t['instance']}: {error}"
            if t["healthy"] and t["last"] is not None:
                host.last_seen = max(host.last_seen or 0.0, t["last"])
            verdicts.setdefault(name, []).append(status)
        for name in grouped:  # series of hosts no target names (federated or relabelled): shown as up
            hosts.setdefault(name, Host(name, UP))
        for name, host in hosts.items():
            seen = verdicts.get(name, [UP])
            host.status = (
                UP if all(s == UP for s in seen) else UNREACHABLE if all(s == UNREACHABLE for s in seen) else STALE
            )
            if UP not in seen and host.status == STALE and not grouped.get(name):
                host.status = UNREACHABLE
            exposition.read_host(host, grouped.get(name, []))
            exposition.add_batch(host, self._batch_devices.get(name, {}))
            judge(host, self.expect_gpus)
        return sorted(hosts.values(), key=lambda h: h.name)

    def history(self, host: Host) -> None:
        """Fill each device's `history` with its utilisation over the last `history_s` (query_range)."""
        name = promql_string(host.name)
        query = (
            f"gpudash_device_utilization_ratio{{hostname={name}}}"
            f" or (DCGM_FI_DEV_GPU_UTIL{{hostname={name}}} / 100)"
            f" or (DCGM_FI_DEV_GPU_UTIL{{Hostname={name}}} / 100)"
            f" or (gpu_gfx_activity{{hostname={name}}} / 100)"
            f" or (gpu_utilization_Percentage{{hostname={name}}} / 100)"
            f" or (all_smi_gpu_utilization{{exported_instance={name}}} / 100)"
        )
        end = time.time()
        step = max(1, self.history_s // 120)
        start = end - step * (self.history_s // step)  # so that `end` itself is one of the points
        data = self._wait(
            self._api("query_range", query=query, start=f"{start:.3f}", end=f"{end:.3f}", step=f"{step}s")
        )
        by_id = {d.id: d for d in host.devices}
        for r in data["result"]:
            labels = r["metric"]
            ident = exposition.identity_from_labels(labels)
            device = by_id.get(ident) if ident else None
            if device is None or (device.history and "device_key" in labels):
                continue  # a vendor exporter's series wins over gpudash's for the same GPU
            device.history = [
                (float(t), float(v)) for t, v in r["values"] if plausible("utilization_ratio", float(v)) is not None
            ]
