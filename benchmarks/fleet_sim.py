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
    args = parser.parse_args()

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


if __name__ == "__main__":
    raise SystemExit(main())
