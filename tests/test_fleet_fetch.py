"""The fleet's HTTP GET (gpudash.fleet.fetch) against servers that behave as real exporters do and as broken
ones do: Go's chunked answers on a connection kept open, a server that trickles bytes, HTML, 404, a server that
hangs up, an oversized page, and TLS with and without the CA file. Each error is a few words a user can act on,
and no request outlives its time limit."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from servers import DGX, gpudash_serve, self_signed_certificate, socket_server

from gpudash.fleet import fetch as fetch_module
from gpudash.fleet.fetch import FetchError, fetch
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import parse_target

pytestmark = pytest.mark.light


def get(url: str, timeout_s: float, ca_file: str | None = None) -> str:
    """One fetch from a caller without an event loop, as `gpudash fleet`'s callers wait for one."""

    async def once() -> str:
        try:
            return await fetch(url, timeout_s, ca_file)
        finally:
            await asyncio.sleep(0)  # the closed connection's callbacks run before this loop ends

    return asyncio.run(once())


@contextlib.contextmanager
def raw_server(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback server that reads one request per connection and hands the socket to `answer`, which writes
    whatever bytes it likes (and may keep the connection open, as keep-alive servers do)."""

    def one_request(conn: socket.socket) -> None:
        conn.recv(65536)
        answer(conn)

    with socket_server(one_request) as (url, _):
        yield url


PAGE = b'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n1"} 42\n'


def held_open(conn: socket.socket, limit_s: float = 3.0) -> None:
    """Keep the connection open, as a keep-alive server does, until the client closes it (or socket_server shuts
    it down once the test is done), at most `limit_s`: a client that waits for the server's EOF waits in vain
    all that time, and one that stops at the answer's end is not held up (the test no longer waits out a fixed
    sleep for the server's thread)."""
    conn.settimeout(limit_s)
    with contextlib.suppress(TimeoutError):
        while conn.recv(4096):
            pass


def chunked_kept_open(conn: socket.socket) -> None:
    # Go's net/http: no Content-Length for a streamed body, chunked framing, and HTTP/1.1 keep-alive
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nTransfer-Encoding: chunked\r\n\r\n"
    half = len(PAGE) // 2
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (PAGE[:half], PAGE[half:])) + b"0\r\n\r\n"
    conn.sendall(head + body)
    held_open(conn)  # the client must stop at the last chunk, not wait for EOF


def length_kept_open(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(PAGE), PAGE))
    held_open(conn)


def test_a_chunked_answer_on_a_connection_kept_open_is_read_without_waiting_for_the_close():
    with raw_server(chunked_kept_open) as url:
        t0 = time.monotonic()
        assert get(url, 2.0).encode() == PAGE
        assert time.monotonic() - t0 < 1.0


def test_an_answer_with_a_length_on_a_connection_kept_open_is_read_without_waiting_for_the_close():
    with raw_server(length_kept_open) as url:
        t0 = time.monotonic()
        assert get(url, 2.0).encode() == PAGE
        assert time.monotonic() - t0 < 1.0


def trickle(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
    for _ in range(50):
        conn.sendall(b"x")
        time.sleep(0.1)


def html(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html></html>")
    conn.close()


def not_found(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    conn.close()


def hang_up(conn: socket.socket) -> None:
    conn.close()


def cut_off(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 500\r\n\r\nonly this")
    conn.close()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (trickle, "no answer within 1 s"),  # a deadline on the whole request, not on each read
        (html, "an HTML page, not metrics (is the path /metrics?)"),
        (not_found, "HTTP 404 Not Found"),
        (hang_up, "the server closed the connection without answering"),
        (cut_off, "the answer was cut off"),
    ],
)
def test_broken_servers_give_a_few_words_within_the_time_limit(answer, error):
    with raw_server(answer) as url:
        t0 = time.monotonic()
        with pytest.raises(FetchError) as caught:
            get(url, 1.0)
        assert time.monotonic() - t0 < 2.0
    assert str(caught.value) == error


def test_a_page_bigger_than_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(fetch_module, "MAX_BYTES", 1000)
    monkeypatch.setattr(fetch_module, "CHUNK", 256)
    page = b"HTTP/1.0 200 OK\r\n\r\n" + b"x 1\n" * 1000
    with raw_server(lambda conn: conn.sendall(page)) as url, pytest.raises(FetchError, match="answer larger than"):
        get(url, 2.0)


def test_nobody_listening_is_connection_refused():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(FetchError, match=r"^connection refused$"):
        get(f"http://127.0.0.1:{port}/metrics", 2.0)


def test_the_scraper_reads_a_tls_endpoint_with_its_ca_file_and_says_why_not_without(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    with gpudash_serve(
        "--replay", str(DGX), "--hostname", "tls-node", "--tls-cert", str(cert), "--tls-key", str(key)
    ) as (
        url,
        _,
    ):
        target = parse_target(url, "--hosts")
        trusted = Scraper([target], timeout_s=5.0, ca_file=str(cert))
        untrusted = Scraper([target], timeout_s=5.0)
        try:
            (host,) = trusted.round().hosts
            gpus = [d for d in host.devices if d.mig_instance is None]  # the DGX's GPU 7 has MIG rows too
            assert (host.name, host.status, len(gpus)) == ("tls-node", "up", 8)
            (refused,) = untrusted.round().hosts
            assert refused.status == "unreachable" and "TLS: CERTIFICATE_VERIFY_FAILED" in (refused.error or "")
        finally:
            trusted.close()
            untrusted.close()


def test_a_closed_scraper_leaves_no_thread_behind():
    def names() -> set[str]:
        return {t.name for t in threading.enumerate()}

    before = names()
    with raw_server(length_kept_open) as url:
        # A host name, not an address: its lookup runs on a worker thread of the event loop, which must end too.
        scraper = Scraper([parse_target(url.replace("127.0.0.1", "localhost"), "--hosts")], timeout_s=2.0)
        scraper.round()
        assert "fleet-io" in names()
        scraper.close()
        left = names() - before  # at once, not after the test server's own threads wound down
        assert not [name for name in left if name.startswith(("fleet-io", "asyncio_"))]
    assert names() - before == set()


def test_closing_does_not_wait_for_a_name_lookup_stuck_in_a_slow_resolver():
    # A resolver that does not answer (no network, a dead DNS server) keeps getaddrinfo's worker thread busy for
    # many seconds. `gpudash fleet --prometheus NAME` must still end within its own deadline: close() lets go.
    from gpudash.fleet.io_loop import CLOSE_WAIT_S, IoLoop

    released = threading.Event()
    started = threading.Event()

    def stuck_lookup() -> None:
        started.set()
        released.wait(60)

    async def ask() -> None:
        await asyncio.get_running_loop().run_in_executor(None, stuck_lookup)

    io = IoLoop()
    try:
        io.submit(ask())
        assert started.wait(10)
        begun = time.monotonic()
        io.close()  # raised TimeoutError after 5 s, or blocked until the lookup ended, before
        took = time.monotonic() - begun
        assert took < 3 * CLOSE_WAIT_S + 2, f"close() took {took:.1f} s behind a stuck lookup"
    finally:
        released.set()
