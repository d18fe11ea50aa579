"""Simulated fleet for benchmarks/fleet_scale.py: N gpudash exporters on 127.0.0.1, in one process.

    python benchmarks/fleet_sim.py --hosts 128 [--keep-alive]

Each host is `gpudash serve`'s endpoint (gpudash.exporter.http: its WSGI app on a wsgiref server, which
closes every connection after its answer) on its own loopback port, with gpudash's real collector over the
replayed 8-GPU snapshot (examples/snapshots/dgx-h100-8gpu.json), hostname label sim-000 ... sim-127. One
process instead of 128 keeps the machine usable; every host still answers its own connections, on its own
server thread. Prints one JSON line {"ports": [...]} when all listen, then serves until stdin closes.
Nothing is remembered for the replayed machine here: each host serves spec, recommendation and telemetry.

--keep-alive: the same WSGI app answered the way Go's net/http answers (dcgm-exporter, AMD's
device-metrics-exporter, node_exporter): HTTP/1.1 with a Content-Length, the connection kept open for the
next request. All hosts then share one asyncio loop in one thread.

--prometheus-api: instead of exporters, one loopback server answering Prometheus's HTTP API as a Prometheus that
scrapes --hosts 8-GPU hosts would (each host two targets: dcgm-exporter on :9400 and gpudash serve on :9483):
/api/v1/query returns the series of the metric names the query names (`{__name__=~"A|B"}`, less those whose UUID
`unless on(UUID) (NAME >= 0)` names, plus `gpudash_health_check_status == 1` when asked), /api/v1/targets every
target healthy, /api/v1/query_range nothing. Answers are JSON built once per name and joined per request, keep-alive, on one asyncio loop. Prints
{"port": N} (and "series": how many it holds).

--hostile huge|endless|trickle|mixed: instead of gpudash, endpoints that attack the scraper (issue 27), all on
one asyncio loop in one thread:
  huge     a 30 MiB page (Content-Length) naming 57,351 hosts x 8 GPUs (458,808 devices), dcgm-exporter's names;
  endless  a chunked body that never ends: 64 KiB chunks of such lines, as fast as the client reads;
  trickle  the headers, then one byte of a line every 50 ms, forever;
  mixed    endpoint i gets huge, endless, trickle in turn.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=128)
    parser.add_argument("--keep-alive", action="store_true", help="answer as Go exporters do (see above)")
    parser.add_argument("--hostile", choices=HOSTILE_KINDS, help="endpoints that attack the scraper (see above)")
    parser.add_argument("--prometheus-api", action="store_true", help="answer as Prometheus would (see above)")
    args = parser.parse_args()
    if args.prometheus_api:
        port, count = prometheus_api(args.hosts)
        print(json.dumps({"port": port, "series": count}), flush=True)
        sys.stdin.read()
        return 0
    if args.hostile:
        ports = hostile_servers(args.hostile, args.hosts)
        print(json.dumps({"ports": ports}), flush=True)
        sys.stdin.read()
        return 0

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.exporter import registry_for
    from gpudash.exporter.http import MetricsApp, start

    ports = []
    apps = []
    for i in range(args.hosts):
        _, collector = registry_for(discover(replay=str(DGX)), defaults(), hostname=f"sim-{i:03d}")
        collector.families()  # warm, as `gpudash serve` is before it listens
        apps.append(MetricsApp(collector))
        if not args.keep_alive:
            server = start(apps[-1], "127.0.0.1", 0)  # the endpoint `gpudash serve` runs
            ports.append(server.server_address[1])
    if args.keep_alive:
        ports = keep_alive_servers(apps)
    print(json.dumps({"ports": ports}), flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin; the servers' threads are daemons and end with us
    return 0


def keep_alive_servers(apps: list) -> list[int]:
    """Each app on its own loopback port, answering request after request on one connection; ports once all
    listen (the loop runs on in a daemon thread)."""
    import asyncio
    import threading
    from urllib.parse import urlsplit

    def respond(app, target: str, accept: str) -> bytes:
        parts = urlsplit(target)
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": parts.path, "QUERY_STRING": parts.query}
        environ["HTTP_ACCEPT"] = accept
        status_headers: list = []
        body = b"".join(app(environ, lambda status, headers: status_headers.extend((status, headers))))
        status, headers = status_headers
        head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        return f"{head}Content-Length: {len(body)}\r\n\r\n".encode("latin-1") + body

    async def serve(app, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                lines = head.decode("latin-1").split("\r\n")
                target = lines[0].split(" ")[1]
                accept = next(
                    (line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("accept:")), ""
                )
                writer.write(respond(app, target, accept))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    loop = asyncio.new_event_loop()
    ready: list[int] = []

    async def listen() -> None:
        for app in apps:
            server = await asyncio.start_server(lambda r, w, app=app: serve(app, r, w), "127.0.0.1", 0)
            ready.append(server.sockets[0].getsockname()[1])

    loop.run_until_complete(listen())
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return ready


GPUS = 8
CHECKS = ("gpu.count", "gpu.xid", "gpu.ecc.sram", "gpu.ecc.dram", "gpu.remapped_rows", "gpu.retired_pages",
          "gpu.recovery_action", "gpu.clock_events", "gpu.pcie", "gpu.nvlink", "gpu.persistence", "gpu.temperature")  # fmt: skip
PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "fp4")


def prometheus_series(hosts: int) -> dict[str, list[str]]:
    """Per metric name, the JSON of each series (one `result` item of an instant query), as Prometheus holds the
    series of `hosts` 8-GPU hosts scraped from dcgm-exporter and gpudash serve (labels as those exporters write
    them, plus Prometheus's instance and job)."""
    import time as clock

    now = f"{clock.time():.3f}"
    out: dict[str, list[str]] = {}

    def add(name: str, labels: dict[str, str], value: float) -> None:
        metric = json.dumps({"__name__": name.split("!")[0], **labels}, separators=(",", ":"))
        out.setdefault(name, []).append(f'{{"metric":{metric},"value":[{now},"{value:g}"]}}')

    for h in range(hosts):
        host, address = f"sim-{h:04d}", f"10.{h // 250}.{h % 250}.1"
        add("gpudash_machine_info", {"hostname": host, "instance": f"{address}:9483", "job": "gpudash",
            "source": "live", "replayed": "false", "driver_version": "550.54.15", "torch_version": "2.5.1",
            "cuda_version": "12.4", "hip_version": "", "gpudash_version": "0.9.0"}, 1)  # fmt: skip
        for g in range(GPUS):
            uuid = f"GPU-{h:04d}{g:04d}-0000-0000-0000-000000000000"
            dcgm = {"gpu": str(g), "UUID": uuid, "device": f"nvidia{g}", "modelName": "NVIDIA H100 80GB HBM3",
                    "Hostname": host, "pci_bus_id": f"00000000:{g + 0x18:02X}:00.0",
                    "DCGM_FI_DRIVER_VERSION": "550.54.15", "instance": f"{address}:9400", "job": "dcgm"}  # fmt: skip
            for name, value in (("DCGM_FI_DEV_GPU_UTIL", 40 + g), ("DCGM_FI_DEV_FB_USED", 20000 + g),
                                ("DCGM_FI_DEV_FB_FREE", 61000), ("DCGM_FI_DEV_GPU_TEMP", 50 + g),
                                ("DCGM_FI_DEV_POWER_USAGE", 300.5 + g)):  # fmt: skip
                add(name, dcgm, value)
            ours = {"hostname": host, "device_key": f"nvidia:{g}", "vendor": "nvidia", "gpu": str(g),
                    "modelName": "NVIDIA H100 80GB HBM3", "UUID": uuid, "pci_bus_id": dcgm["pci_bus_id"],
                    "instance": f"{address}:9483", "job": "gpudash"}  # fmt: skip
            for name, value in (("gpudash_device_utilization_ratio", 0.4), ("gpudash_device_memory_used_bytes", 2e10),
                                ("gpudash_device_memory_total_bytes", 8.5e10),
                                ("gpudash_device_temperature_celsius", 50.0), ("gpudash_device_power_watts", 300.0),
                                ("gpudash_device_lost", 0)):  # fmt: skip
                add(name, ours, value)
            add("gpudash_device_info", {**ours, "name": "NVIDIA H100 80GB HBM3", "arch": "hopper",
                "compute_capability": "9.0", "driver_version": "550.54.15"}, 1)  # fmt: skip
            add("gpudash_recommendation_info", {**ours, "amp_dtype": "bfloat16"}, 1)
            for precision in PRECISIONS:
                add("gpudash_precision_verified", {**ours, "precision": precision}, 1)
            add("gpudash_health_timestamp_seconds", ours, 1.7e9)
            for check in CHECKS:  # only the series whose value is 1: what `== 1` returns
                severity = "WARN" if (h, g, check) == (7, 3, "gpu.pcie") else "OK"  # one finding in the fleet
                add("gpudash_health_check_status", {**ours, "check_id": check, "severity": severity}, 1)
                if severity != "OK":
                    add("gpudash_health_check_status!OK", {**ours, "check_id": check, "severity": severity}, 1)
    return out


def prometheus_api(hosts: int) -> tuple[int, int]:
    """Serve the simulated Prometheus API on a loopback port (a daemon thread's loop); (port, series held)."""
    import asyncio
    import re
    import threading
    from urllib.parse import parse_qs, urlsplit

    series = prometheus_series(hosts)
    targets = []
    for h in range(hosts):
        address = f"10.{h // 250}.{h % 250}.1"
        for port, job in ((9400, "dcgm"), (9483, "gpudash")):
            targets.append({"labels": {"instance": f"{address}:{port}", "job": job}, "health": "up",
                            "lastError": "", "lastScrape": "2099-01-01T00:00:00Z", "scrapeInterval": "15s"})  # fmt: skip
    targets_body = json.dumps({"status": "success", "data": {"activeTargets": targets}}).encode()
    empty = b'{"status":"success","data":{"resultType":"matrix","result":[]}}'
    answers: dict[str, bytes] = {}  # the series never change: each query's answer is built once

    def answer(target: str) -> bytes:
        parts = urlsplit(target)
        if parts.path.endswith("/targets"):
            return targets_body
        if parts.path.endswith("/query_range"):
            return empty
        query = parse_qs(parts.query).get("query", [""])[0]
        if query not in answers:
            answers[query] = instant(query)
        return answers[query]

    def instant(query: str) -> bytes:
        regex = re.search(r'=~"([^"]*)"', query)
        names = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", regex.group(1))) if regex else set()
        if query.startswith("gpudash_health_check_status"):
            names.add("gpudash_health_check_status!OK" if 'severity!="OK"' in query else "gpudash_health_check_status")
        found = [item for n in sorted(names) if n in series for item in series[n]]
        unless = re.search(r"unless on\(UUID\) \((\w+) >= 0\)", query)  # gpudash.fleet.prometheus.live_query
        if unless:  # every value here is a number >= 0: leave out the series whose UUID the right-hand name has
            covered = {json.loads(item)["metric"].get("UUID") for item in series.get(unless.group(1), [])}
            found = [item for item in found if json.loads(item)["metric"].get("UUID") not in covered]
        return ('{"status":"success","data":{"resultType":"vector","result":[' + ",".join(found) + "]}}").encode()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                target = head.decode("latin-1").split(" ", 2)[1]
                body = answer(target)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)  # fmt: skip
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(asyncio.start_server(serve, "127.0.0.1", 0))
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return server.sockets[0].getsockname()[1], sum(len(v) for v in series.values())


HOSTILE_KINDS = ("huge", "endless", "trickle", "mixed")
HUGE_HOSTS, HUGE_GPUS = 57_351, 8


def huge_page(hosts: int = HUGE_HOSTS, gpus: int = HUGE_GPUS) -> bytes:
    """About 30 MiB of dcgm-exporter lines: `hosts` hostnames with `gpus` GPUs each, one line per GPU."""
    line = 'DCGM_FI_DEV_GPU_UTIL{{gpu="{d}",UUID="GPU-{h:05d}-{d}",Hostname="h{h:05d}"}} 50\n'
    return "".join(line.format(h=h, d=d) for h in range(hosts) for d in range(gpus)).encode()


def hostile_servers(kind: str, count: int, page: bytes | None = None) -> list[int]:
    """`count` hostile endpoints on loopback ports (kind as in the module's docstring); their ports once all
    listen. The loop runs on in a daemon thread."""
    import asyncio
    import itertools
    import threading

    page = huge_page() if page is None and kind in ("huge", "mixed") else page
    chunk = huge_page(1024, 8)[: 1 << 16]
    chunk = chunk[: chunk.rfind(b"\n") + 1]

    async def answer(mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
            if mode == "huge":
                assert page is not None
                writer.write(f"{head}Content-Length: {len(page)}\r\n\r\n".encode() + page)
                await writer.drain()
            elif mode == "endless":
                writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
                while True:
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    await writer.drain()
            else:  # trickle
                writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
                for byte in itertools.cycle(chunk):
                    writer.write(b"1\r\n%c\r\n" % byte)
                    await writer.drain()
                    await asyncio.sleep(0.05)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    loop = asyncio.new_event_loop()
    ready: list[int] = []

    async def listen() -> None:
        for i in range(count):
            mode = HOSTILE_KINDS[i % 3] if kind == "mixed" else kind
            server = await asyncio.start_server(lambda r, w, m=mode: answer(m, r, w), "127.0.0.1", 0)
            ready.append(server.sockets[0].getsockname()[1])

    loop.run_until_complete(listen())
    threading.Thread(target=loop.run_forever, daemon=True).start()
    return ready


if __name__ == "__main__":
    raise SystemExit(main())
