"""Real servers the fleet tests start and stop: `gpudash serve`, Prometheus, node_exporter, exposition stubs.

Everything binds 127.0.0.1, every wait is bounded, and every process is killed on the way out (by its own
handle, never by name).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DGX = REPO / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary_or_skip(name: str) -> str:
    """The path of a Debian binary the test needs; without it the test is skipped with the install line
    (CI installs them: .ci/run)."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
    if path is None:
        package = "prometheus-node-exporter" if "node" in name else name
        pytest.skip(f"{name} is not installed here (apt-get install -y {package}; .ci/run installs it)")
    return path


def get(url: str, timeout: float = 5.0, context=None) -> str:
    with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
        return response.read().decode()


def wait_for(url: str, timeout: float = 15.0, proc: subprocess.Popen | None = None) -> str:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{proc.args[0]} exited with {proc.returncode}")
        try:
            return get(url, timeout=2.0)
        except OSError as exc:
            last = exc
            time.sleep(0.05)
    raise AssertionError(f"{url} did not answer within {timeout} s: {last}")


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout)


@contextlib.contextmanager
def gpudash_serve(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """`gpudash serve --listen 127.0.0.1:0 ARGS`; yields (its /metrics URL, the process)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudash", "serve", "--listen", "127.0.0.1:0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        url = _announced_url(proc, timeout=30.0)
        yield url, proc
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()


def threads_of(pid: int) -> str:
    """What each thread of a process is doing, as the kernel sees it (name, state R/S/D, wait channel): for a
    test's message when the process did not do what it was asked in time, starved (R), waiting (S) or stuck in
    the kernel (D)."""
    parts = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        try:
            name = (task / "comm").read_text().strip()
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = (task / "wchan").read_text().strip() or "-"
        except OSError:
            continue
        parts.append(f"{task.name} {name} {state} {wchan}")
    return "; ".join(parts) or "no threads (gone)"


def _announced_url(proc: subprocess.Popen, timeout: float) -> str:
    """The URL from `gpudash: serving URL (...)` on stderr (port 0 picks the port)."""
    try:
        return stderr_line(proc, "gpudash: serving ", timeout, start=True).split()[2]
    except AssertionError as exc:
        raise AssertionError(f"gpudash serve did not start: {exc} (exit {proc.poll()})") from None


def stderr_line(proc: subprocess.Popen, wanted: str, timeout: float = 20.0, start: bool = False) -> str:
    """The next line of the process's stderr that contains (or, with `start`, starts with) `wanted`, waited
    for at most `timeout` s."""
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(proc.stderr, selectors.EVENT_READ)  # type: ignore[arg-type]
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            break
        line = proc.stderr.readline()  # type: ignore[union-attr]
        if not line:
            break
        seen.append(line)
        if line.startswith(wanted) if start else wanted in line:
            return line
    raise AssertionError(f"no line with {wanted!r} on stderr: {''.join(seen)!r}")


@contextlib.contextmanager
def prometheus(tmp_path: Path, targets: list[str], interval: str = "1s") -> Iterator[str]:
    """The Debian prometheus binary scraping `targets` (host:port); yields its base URL."""
    binary = binary_or_skip("prometheus")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    listed = ", ".join(f"'{t}'" for t in targets)
    config.write_text(
        f"global:\n  scrape_interval: {interval}\n  scrape_timeout: {interval}\n"
        f"scrape_configs:\n  - job_name: gpudash\n    static_configs:\n      - targets: [{listed}]\n"
    )
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/-/ready", timeout=20.0, proc=proc)
        yield base
    finally:
        stop(proc)


@contextlib.contextmanager
def node_exporter(textfile_dir: Path) -> Iterator[str]:
    """Debian's node_exporter with only the textfile collector; yields its /metrics URL."""
    binary = binary_or_skip("prometheus-node-exporter")
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            f"--web.listen-address=127.0.0.1:{port}",
            "--collector.disable-defaults",
            "--collector.textfile",
            f"--collector.textfile.directory={textfile_dir}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        wait_for(url, timeout=15.0, proc=proc)
        yield url
    finally:
        stop(proc)


def self_signed_certificate(folder: Path, serial: int | None = None) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1 (openssl), valid for a day: TLS tests trust it as their CA file.
    `serial`: its serial number (openssl -set_serial), to tell rotated certificates apart; an EC key then, quick
    to make when a test needs several."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    kind = ["rsa:2048"] if serial is None else ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    numbered = [] if serial is None else ["-set_serial", str(serial)]
    subject = "/CN=127.0.0.1" if serial is None else f"/CN=127.0.0.1 {serial}"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", *kind, "-nodes", "-days", "1", *numbered, "-subj", subject,
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@contextlib.contextmanager
def socket_server(handle: Callable[[socket.socket], None]) -> Iterator[tuple[str, dict]]:
    """A loopback server that hands each connection it accepts to `handle`, on a thread of its own, and closes
    it when `handle` returns; `handle` writes whatever bytes it likes (kept-open connections, broken answers).
    Yields its /metrics URL and {"connections": how many it accepted}. On the way out every connection is shut
    down and every thread joined (bounded), so a test that counts threads sees none of these."""
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()
    counts = {"connections": 0}
    accepted: list[tuple[socket.socket, threading.Thread]] = []

    def serve_one(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # OSError: the client gave up on this connection
            handle(conn)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            counts["connections"] += 1
            worker = threading.Thread(target=serve_one, args=(conn,), daemon=True)
            accepted.append((conn, worker))
            worker.start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/metrics", counts
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
        for conn, worker in accepted:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            worker.join(timeout=5)


@contextlib.contextmanager
def exposition_server(pages, delay_s: float = 0.0) -> Iterator[tuple[str, dict]]:
    """An in-process HTTP server on 127.0.0.1 answering GET with `pages(path) -> text` (or a fixed text),
    after `delay_s`; yields (its base URL, stats: requests served and the most handled at once)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    lock = threading.Lock()
    stats = {"requests": 0, "in_flight": 0, "most": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            with lock:
                stats["requests"] += 1
                stats["in_flight"] += 1
                stats["most"] = max(stats["most"], stats["in_flight"])
            try:
                time.sleep(delay_s)
                body = (pages(self.path) if callable(pages) else pages).encode()
            finally:
                # Counted until the answer leaves: the client cannot send its next request before that, so
                # the count never includes this handler's own teardown.
                with lock:
                    stats["in_flight"] -= 1
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", stats
    finally:
        server.shutdown()
        server.server_close()


def dcgm_page(snapshot: Path, hostname: str, util: float = 97.0) -> str:
    """What dcgm-exporter would publish for the GPUs of a snapshot (names, units and labels of its default
    counters), for the fleet tests that merge it with gpudash's series."""
    import json

    devices = json.loads(snapshot.read_text())["devices"]
    lines = []
    for name, help_text, value in (
        ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", lambda d: util),
        ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", lambda d: 40960),
        ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", lambda d: 40000),
        ("DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).", lambda d: 595),
        ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", lambda d: 61),
        ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", lambda d: 650.5),
        ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", lambda d: 1980),
    ):
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
        for d in devices:
            labels = (
                f'gpu="{d["index"]}",UUID="{d["uuid"]}",pci_bus_id="{d["pci_bus_id"]}",device="nvidia{d["index"]}",'
                f'modelName="{d["name"]}",Hostname="{hostname}",DCGM_FI_DRIVER_VERSION="{d["driver_version"]}"'
            )
            lines.append(f"{name}{{{labels}}} {value(d)}")
    return "\n".join(lines) + "\n"
