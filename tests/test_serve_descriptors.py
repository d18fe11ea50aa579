"""`gpudash serve` with few file descriptors and more idle sockets against it than it may open (the issue's
report: 1,026 idle TCP connections used up the descriptors and every scrape timed out until they closed).

The server's connection cap is lowered to what RLIMIT_NOFILE allows, so it sheds the oldest idle connections
long before accept() fails; where descriptors run out anyway (something else in the process holds them), it
closes an idle connection for each accept() that failed, and never spins on EMFILE. Loopback only, a few
hundred sockets, every wait on a condition with a bound."""

from __future__ import annotations

import os
import resource
import select
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from servers import DGX, REPO, _announced_url, stop
from test_serve_limits import SCRAPE_BOUND_S, closed_by_server, room_for_files, wait_until

from gpudash.exporter.server.limits import FD_RESERVE

pytestmark = [
    pytest.mark.light,
    pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the server's descriptors in /proc"),
]

SERVER_NOFILE = 256  # the open-files limit the server runs under
IDLE = 300  # idle sockets held against it: more than it may open


@pytest.fixture
def room_for_sockets():
    """Room in this process for IDLE client sockets beside pytest's own descriptors."""
    with room_for_files(1024, IDLE + 100, f"{IDLE} sockets"):
        yield


def limit_files() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def scrape(port: int) -> tuple[int, float]:
    """One normal scrape on a new connection, as Prometheus makes it: (status, seconds)."""
    import http.client

    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=SCRAPE_BOUND_S)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        response.read()
        return response.status, time.monotonic() - start
    finally:
        conn.close()


def still_open(sock: socket.socket) -> bool:
    """Nothing to read on it: the server has not closed it."""
    return not select.select([sock], [], [], 0)[0]


def open_idle(port: int, count: int, pid: int, most: list[int]) -> list[socket.socket]:
    """`count` connections that never send a byte; `most` gets the server's descriptor count every 25."""
    idle: list[socket.socket] = []
    try:
        for i in range(count):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            if i % 25 == 0:
                most.append(descriptors(pid))
    except BaseException:
        for sock in idle:
            sock.close()
        raise
    return idle


def test_a_real_serve_under_a_low_open_files_limit_sheds_the_oldest_idle_and_answers(room_for_sockets):
    """`gpudash serve --max-connections 1000` under RLIMIT_NOFILE=256 (a cap the limit cannot hold), 300 idle
    sockets held against it: it never comes near the limit, closes the oldest idle ones, and a scrape answers
    within its bound while they are held."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpudash", "--replay", str(DGX), "serve", "--listen", "127.0.0.1:0",
         "--no-telemetry", "--max-connections", "1000"],
        cwd=REPO, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, preexec_fn=limit_files,
    )  # fmt: skip
    try:
        url = _announced_url(proc, timeout=30.0)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert scrape(port)[0] == 200
        most: list[int] = []
        idle = open_idle(port, IDLE, proc.pid, most)
        try:
            cap = (SERVER_NOFILE - FD_RESERVE) // 2  # what Limits.connection_cap allows under this limit
            assert closed_by_server(idle[0], timeout=10)  # the oldest idle connection went first
            assert wait_until(lambda: sum(not still_open(s) for s in idle) >= IDLE - cap)
            for _ in range(3):
                status, took = scrape(port)
                assert status == 200 and took < SCRAPE_BOUND_S
            assert still_open(idle[-1])  # the newest idle ones are kept: only what the cap needs is shed
            most.append(descriptors(proc.pid))
            # room left for what a scrape opens (state files, driver children): accept() never hit EMFILE
            assert max(most) <= SERVER_NOFILE - FD_RESERVE // 2, most
            assert proc.poll() is None
        finally:
            for sock in idle:
                sock.close()
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()


CHILD = textwrap.dedent(
    """
    import resource, sys, time
    from gpudash.exporter.server import Limits, Server

    def hello(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"gpudash_up 1\\n"]

    server = Server(hello, Limits(max_connections=1000, handshake_s=60, idle_s=60, read_s=60, write_s=60))
    server.bind("127.0.0.1", 0)
    # Descriptors run out below the cap, as when something else in the process holds them
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    server.start()
    started = time.monotonic()
    print(server.port, flush=True)
    sys.stdin.readline()
    took = time.monotonic() - started
    print(server.out_of_descriptors, server.connections.evicted, round(took, 3), flush=True)
    server.close()
    """
)


def test_out_of_descriptors_an_idle_connection_is_closed_for_each_failed_accept_and_accept_never_spins(
    room_for_sockets,
):
    """A server whose cap (1,000) is beyond its descriptors (128): accept() fails with EMFILE; each failure
    closes the longest-idle connection, so the scrape is accepted, and the failures stay bounded (a loop that
    retried accept() at once would count thousands a second and never reach the scrape)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        port = int(proc.stdout.readline())
        most: list[int] = []
        idle = open_idle(port, IDLE, proc.pid, most)
        try:
            for _ in range(3):
                status, took = scrape(port)
                assert status == 200 and took < SCRAPE_BOUND_S
            assert still_open(idle[-1])
        finally:
            for sock in idle:
                sock.close()
        proc.stdin.write("report\n")
        proc.stdin.flush()
        failed, evicted, took = proc.stdout.readline().split()
        assert int(failed) > 0, "accept() never ran out of descriptors: the test did not test anything"
        # each failure closed a connection, or (nothing to close) waited 50 ms before trying again
        assert int(failed) <= int(evicted) + 20 * float(took) + 10, (failed, evicted, took)
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        stop(proc)
