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
    args = parser.parse_args()
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
