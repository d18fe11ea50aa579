"""`gpudash serve` under load on loopback: many concurrent scrapers, optionally beside clients that try to stall
it (idle sockets, headers a byte a second, TLS connections that never shake hands).

Starts `python -m gpudash --replay examples/snapshots/dgx-h100-8gpu.json serve --listen 127.0.0.1:0` (8 GPUs,
telemetry on), then runs --scrapers threads, spread over --processes client processes, each scraping /metrics
in a loop on a kept-open connection (as Prometheus does) with a --timeout per scrape, reconnecting after an
error, for --duration seconds. Prints the scrape latencies (p50, p99, max), the scrapes done and the errors by
kind, and the most descriptors the server held open (sampled every 0.1 s), as one JSON line.

    .venv/bin/python benchmarks/serve_load.py                                  # 50 scrapers, 60 s
    .venv/bin/python benchmarks/serve_load.py --idle 1100 --server-nofile 1024 --scrapers 5 --duration 20
    .venv/bin/python benchmarks/serve_load.py --idle 300 --server-nofile 256 --max-connections 1000 --scrapers 5
    .venv/bin/python benchmarks/serve_load.py --tls --stalled-tls 20 --scrapers 5 --duration 20
    .venv/bin/python benchmarks/serve_load.py --tree /tmp/gpudash-before      # another checkout's gpudash

--tree runs the gpudash package of another checkout (e.g. `git archive COMMIT gpudash examples | tar -x -C
DIR`) from that folder, so the same load can be measured before and after a change on the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import resource
import selectors
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DGX = "examples/snapshots/dgx-h100-8gpu.json"


def start_server(
    tree: Path, tls: tuple[str, str] | None, nofile: int | None, max_connections: int | None = None
) -> tuple[subprocess.Popen, str]:
    args = [sys.executable, "-m", "gpudash", "--replay", DGX, "serve", "--listen", "127.0.0.1:0"]
    if max_connections is not None:
        args += ["--max-connections", str(max_connections)]
    if tls:
        args += ["--tls-cert", tls[0], "--tls-key", tls[1]]
    env = dict(os.environ, XDG_STATE_HOME=tempfile.mkdtemp(prefix="gpudash-serve-load-"))

    def limit_files() -> None:  # in the child, before exec: the open-files limit a systemd unit would give
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    proc = subprocess.Popen(
        args,
        cwd=tree,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        preexec_fn=limit_files,
    )
    selector = selectors.DefaultSelector()
    assert proc.stderr is not None
    selector.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and selector.select(timeout=max(0.0, deadline - time.monotonic())):
        line = proc.stderr.readline()
        if line.startswith("gpudash: serving "):
            return proc, line.split()[2]
        if not line:
            break
    proc.kill()
    raise SystemExit(f"gpudash serve did not start (exit {proc.poll()})")


def certificate(folder: str) -> tuple[str, str]:
    cert, key = f"{folder}/cert.pem", f"{folder}/key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def scraper(port: int, cafile: str | None, until: float, timeout: float, out: list) -> None:
    """Scrape in a loop on one kept-open connection; (seconds, error or None) per scrape into `out`."""
    context = ssl.create_default_context(cafile=cafile) if cafile else None
    conn: http.client.HTTPConnection | None = None
    while time.monotonic() < until:
        if conn is None:
            if context is not None:
                conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=context)
            else:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        start = time.monotonic()
        try:
            conn.request("GET", "/metrics")
            response = conn.getresponse()
            body = response.read()
            error = None if response.status == 200 and body else f"HTTP {response.status}"
            if response.getheader("Connection", "").lower() == "close" or response.version == 10:
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as exc:
            error = "timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
            conn.close()
            conn = None
        out.append((time.monotonic() - start, error))
    if conn is not None:
        conn.close()


def client_process(port: int, cafile: str | None, threads: int, until: float, timeout: float, queue) -> None:
    results: list = []
    workers = [
        threading.Thread(target=scraper, args=(port, cafile, until, timeout, results), daemon=True)
        for _ in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(until - time.monotonic() + timeout + 5)
    queue.put(results)


class Attackers:
    """Idle sockets, slow clients (a header byte a second) and TLS connections that never send a byte. They
    connect all at once without blocking, for at most SETUP_S: a server whose accept queue is full leaves the
    rest unconnected (counted), rather than holding up the measurement."""

    SETUP_S = 10.0

    def __init__(self, port: int, idle: int, slow: int, stalled_tls: int) -> None:
        connected = connect_many(port, idle + stalled_tls + slow, time.monotonic() + self.SETUP_S)
        self.not_connected = idle + stalled_tls + slow - len(connected)
        self.slow = connected[: min(slow, len(connected))]
        self.sockets = connected[len(self.slow) :]
        for sock in self.slow:
            with contextlib.suppress(OSError):
                sock.send(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        while not self._stop.wait(1.0):
            for sock in self.slow:
                with contextlib.suppress(OSError):
                    sock.send(b"x")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for sock in self.sockets + self.slow:
            sock.close()


def connect_many(port: int, count: int, deadline: float) -> list[socket.socket]:
    """`count` connections started at once, those that connected by `deadline` (the others closed)."""
    pending: dict[socket.socket, None] = {}
    selector = selectors.DefaultSelector()
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        pending[sock] = None
        selector.register(sock, selectors.EVENT_WRITE)
    connected = []
    while pending and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            selector.unregister(sock)
            del pending[sock]
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                sock.setblocking(True)
                connected.append(sock)
            else:
                sock.close()
    for sock in pending:
        sock.close()
    selector.close()
    return connected


def open_files_limit(pid: int) -> str:
    """A process's soft limit on open files, from /proc/PID/limits."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
            if line.startswith("Max open files"):
                return line.split()[3]
    return "unknown"


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scrapers", type=int, default=50)
    parser.add_argument("--processes", type=int, default=5, help="client processes the scrapers are spread over")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--timeout", type=float, default=10.0, help="per scrape, as Prometheus's scrape_timeout")
    parser.add_argument("--tls", action="store_true", help="serve HTTPS (a self-signed certificate)")
    parser.add_argument("--idle", type=int, default=0, help="idle TCP connections held open during the run")
    parser.add_argument("--slow", type=int, default=0, help="clients sending a header byte a second")
    parser.add_argument("--stalled-tls", type=int, default=0, help="connections that never start a handshake")
    parser.add_argument(
        "--server-nofile", type=int, help="the server's soft open-files limit (systemd's default is 1024)"
    )
    parser.add_argument("--max-connections", type=int, help="the server's --max-connections (default: its own)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose gpudash runs (default: this)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the server started below is stopped too

    folder = tempfile.mkdtemp(prefix="gpudash-serve-load-tls-")
    tls = certificate(folder) if args.tls else None
    proc, url = start_server(args.tree.resolve(), tls, args.server_nofile, args.max_connections)
    port = int(url.split(":")[2].split("/")[0])
    # Room for the attackers' sockets on this side, raised only now: the server keeps the limit it started with.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.idle + args.slow + args.stalled_tls + 256
    if soft < wanted and (hard == resource.RLIM_INFINITY or hard >= wanted):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    server_files = open_files_limit(proc.pid)
    attackers = None
    watching = threading.Event()
    most_fds = [0]

    def count_fds() -> None:  # the server's open descriptors, every 0.1 s while the run lasts (Linux's /proc)
        while not watching.wait(0.1):
            with contextlib.suppress(OSError):
                most_fds[0] = max(most_fds[0], len(os.listdir(f"/proc/{proc.pid}/fd")))

    counter = threading.Thread(target=count_fds, daemon=True)
    counter.start()
    try:
        attackers = Attackers(port, args.idle, args.slow, args.stalled_tls)
        until = time.monotonic() + args.duration
        queue: multiprocessing.Queue = multiprocessing.Queue()
        per = [args.scrapers // args.processes + (i < args.scrapers % args.processes) for i in range(args.processes)]
        clients = [
            multiprocessing.Process(
                target=client_process, args=(port, tls[0] if tls else None, n, until, args.timeout, queue)
            )
            for n in per
            if n
        ]
        for client in clients:
            client.start()
        results = [item for _ in clients for item in queue.get(timeout=args.duration + args.timeout + 60)]
        for client in clients:
            client.join(30)
    finally:
        watching.set()
        counter.join(5)
        if attackers is not None:
            attackers.close()
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    ok = sorted(t for t, error in results if error is None)
    every = sorted(t for t, _ in results)
    errors: dict[str, int] = {}
    for _, error in results:
        if error:
            errors[error] = errors.get(error, 0) + 1
    report = {
        "tree": str(args.tree),
        "scrapers": args.scrapers,
        "duration_s": args.duration,
        "tls": args.tls,
        "idle": args.idle,
        "slow": args.slow,
        "stalled_tls": args.stalled_tls,
        "server_open_files_limit": server_files,
        "server_open_files_most": most_fds[0] or None,
        "max_connections": args.max_connections,
        "attackers_not_connected": attackers.not_connected if attackers else 0,
        "scrapes": len(results),
        "ok": len(ok),
        "errors": errors,
        "p50_ms": round(statistics.median(ok) * 1000, 1) if ok else None,
        "p99_ms": round(percentile(ok, 0.99) * 1000, 1) if ok else None,
        "max_ms": round(every[-1] * 1000, 1) if every else None,
    }
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
