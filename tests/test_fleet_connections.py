"""Kept-open connections in the fleet's requests (gpudash.fleet.connections): a Go exporter's connection carries
every round, a kept connection the server has closed since is replaced without an error, and a connection that
asked to close, or whose request ran out of time, is never used again."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from servers import node_exporter, socket_server

from gpudash.fleet.connections import Connections
from gpudash.fleet.fetch import FetchError, fetch
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import parse_target

pytestmark = pytest.mark.light

PAGE = b'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1"} 42\n'
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %d\r\n\r\n%s" % (
    len(PAGE),
    PAGE,
)


@contextlib.contextmanager
def counting_server(answer: Callable[[socket.socket, int], bool]) -> Iterator[tuple[str, dict]]:
    """A loopback server that serves requests one after another on each connection: `answer(conn, n)` answers
    the n-th request of the whole server (from 1) and says whether to keep the connection. Yields its URL and
    counts of connections accepted and requests read."""
    requests = [0]

    def serve(conn: socket.socket) -> None:
        conn.settimeout(10)
        while conn.recv(65536):
            requests[0] += 1
            if not answer(conn, requests[0]):
                return

    with socket_server(serve) as (url, counts):
        yield url, counts
        counts["requests"] = requests[0]


def fetches(url: str, count: int, timeout_s: float = 2.0, pause_s: float = 0.0) -> tuple[list[str], Connections]:
    """`count` fetches of `url` one after another on one event loop sharing one pool, as the fleet's rounds do;
    each result is the page or the FetchError's words."""
    pool = Connections()

    async def run() -> list[str]:
        results = []
        for _ in range(count):
            try:
                results.append(await fetch(url, timeout_s, connections=pool))
            except FetchError as exc:
                results.append(f"error: {exc}")
            await asyncio.sleep(pause_s)
        pool.close()
        await asyncio.sleep(0)
        return results

    return asyncio.run(run()), pool


def test_a_go_exporter_answers_every_round_on_one_connection(tmp_path):
    (tmp_path / "gpu.prom").write_text("gpu_note 1\n")
    with node_exporter(tmp_path) as url:
        # node_exporter serves no GPU series: a host expected to have none (else it is "empty", not up).
        scraper = Scraper([parse_target(url, "--hosts")], timeout_s=5.0, expect_gpus=0)
        try:
            statuses = [host.status for _ in range(3) for host in scraper.round().hosts]
            assert statuses == ["up", "up", "up"]
            assert scraper.connections_opened == 1
        finally:
            scraper.close()


def test_a_kept_connection_the_server_closed_since_is_replaced_without_an_error():
    def answer_then_close(conn: socket.socket, n: int) -> bool:
        conn.sendall(ANSWER)  # no "Connection: close": the client keeps it, as with an idle timeout
        return False

    with counting_server(answer_then_close) as (url, counts):
        results, pool = fetches(url, 3, pause_s=0.2)
    assert results == [PAGE.decode()] * 3
    assert counts == {"connections": 3, "requests": 3}  # each GET reached the server once
    assert pool.opened == 3


def test_an_answer_that_asks_to_close_is_never_reused():
    def close_asked(conn: socket.socket, n: int) -> bool:
        conn.sendall(ANSWER.replace(b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK\r\nConnection: close\r\n"))
        return True  # the server would even keep it: the client still must not

    with counting_server(close_asked) as (url, counts):
        results, pool = fetches(url, 3)
    assert results == [PAGE.decode()] * 3 and pool.opened == 3 and counts["connections"] == 3


def test_a_connection_whose_request_ran_out_of_time_is_not_used_again():
    def slow_second(conn: socket.socket, n: int) -> bool:
        if n == 2:
            time.sleep(1.5)  # past the 1 s limit; its late answer must not be read as the next request's
            conn.sendall(ANSWER.replace(b"42", b"77"))
        conn.sendall(ANSWER)
        return True

    with counting_server(slow_second) as (url, counts):
        results, pool = fetches(url, 3, timeout_s=1.0)
    assert results == [PAGE.decode(), "error: no answer within 1 s", PAGE.decode()]
    assert pool.opened == 2 and counts["connections"] == 2  # the first connection carried requests 1 and 2


def test_kept_connections_stop_at_the_limit():
    def keep(conn: socket.socket, n: int) -> bool:
        conn.sendall(ANSWER)
        return True

    with counting_server(keep) as (first, _), counting_server(keep) as (second, _):
        pool = Connections(idle_limit=1)

        async def run() -> int:
            for url in (first, second, first, second):
                await fetch(url, 2.0, connections=pool)
            kept = pool.idle
            pool.close()
            await asyncio.sleep(0)
            return kept

        assert asyncio.run(run()) == 1
    assert pool.opened == 3  # the first server's connection was kept, the second's opened each time
