"""Read the fleet from a Prometheus server: what dcgm-exporter, AMD's exporter, nvitop-exporter, all-smi and
gpudash serve published.

A round makes two calls at once on the fleet's event-loop thread (gpudash.fleet.io_loop), each with the
round's deadline: an instant query for every series the fleet shows (one regex over metric names) and
/api/v1/targets for each target's health, last scrape and last error. A host's status comes from its
targets: up (all healthy and recently scraped), stale (some down, or Prometheus has not scraped it for three
intervals: the values shown are the last ones), unreachable (all down; Prometheus's error shown). Servers
that do not offer /api/v1/targets (some query front-ends) are read through the `up` series instead. A
host's history comes from query_range.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
import urllib.parse
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any

from gpudash.errors import GpudashError
from gpudash.fleet import exposition
from gpudash.fleet.fetch import FetchError, fetch
from gpudash.fleet.io_loop import IoLoop
from gpudash.fleet.model import STALE, UNREACHABLE, UP, FleetRound, Host
from gpudash.fleet.series import WANTED, describe, plausible
from gpudash.fleet.verdict import judge
from gpudash.plain_text import one_line

STALE_INTERVALS = 3
ENUM = "gpudash_health_check_status"


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
    ):
        self.url = url.rstrip("/")
        self.expect_gpus = expect_gpus  # GPUs each host should have (--expect-gpus); None: not said
        self.timeout_s, self.ca_file, self.history_s = timeout_s, ca_file, history_s
        self._io = IoLoop("fleet-prometheus")

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
        try:
            answer = await fetch(url, self.timeout_s, self.ca_file, "application/json", self._io.connections)
            body = json.loads(answer)
        except FetchError as exc:
            raise GpudashError(f"Prometheus at {self.url}: {exc}") from None
        except ValueError:
            raise GpudashError(f"Prometheus at {self.url}: /api/v1/{path} did not answer JSON") from None
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
        started, t0 = time.time(), time.monotonic()
        names = "|".join(sorted(WANTED - {ENUM}))
        # The health enum has a series per severity, only one of them 1: asking for that one keeps the answer small.
        query = f'{{__name__=~"{names}"}} or ({ENUM} == 1)'

        async def both() -> list[Any]:
            return await asyncio.gather(self._api("query", query=query), self._targets())

        found, listed = self._wait(both())
        samples = []
        for r in found["result"]:
            labels = exposition.clean_labels(r["metric"])
            value = float(r["value"][1])
            if math.isfinite(value):
                samples.append((describe(labels.pop("__name__"), labels), value))
        hosts = self._hosts(samples, listed, time.time())
        return FleetRound(
            {"kind": "prometheus", "url": self.url}, hosts, started, time.monotonic() - t0, self.timeout_s
        )

    def _hosts(self, samples: list, targets: list[dict[str, Any]], now: float) -> list[Host]:
        by_instance: dict[str, str] = {}
        grouped: dict[str, list] = {}
        for sample in samples:
            labels = sample[0].labels
            name = sample[0].host or _instance_host(labels.get("instance", "?"))
            by_instance.setdefault(labels.get("instance", ""), name)
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
