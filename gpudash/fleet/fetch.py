"""One HTTP GET with a hard time limit, for the fleet's scrapes and Prometheus API calls.

The request and the bytes travel over asyncio streams (TLS included), so the scraper keeps up to 128
requests in flight on one event-loop thread instead of 128 blocked threads: with a thread each, every
worker's allocator cache and arena kept growing over hours (docs/performance.md, "Fleet view"). The answer
is read whole, then the standard library's http.client parses it (status, headers, Content-Length or chunked
framing), so no HTTP parsing is written here. An answer is read up to the length its headers announce (or its
last chunk), or to the end of the connection. With a `Connections` pool the connection is kept for the next
request to that server (gpudash.fleet.connections); a kept connection the server has closed since is noticed
when the request gets no byte back, and the GET is sent once more on a new one. Without a pool,
`Connection: close` asks the server to end the answer with the connection. A deadline bounds the whole
request, so a server that keeps trickling bytes cannot keep it alive. With a `Hold` on the fleet's memory
budget (gpudash.fleet.budget), every chunk read is taken from the budget first: an answer that would go over
it fails with that reason (the scraper gives the hold back once the answer is parsed).
"""

from __future__ import annotations

import asyncio
import http.client
import io
import re
import socket
import ssl
import urllib.parse

from gpudash import __version__
from gpudash.fleet.budget import Hold
from gpudash.fleet.connections import Connection, Connections, Key

MAX_BYTES = 32 * 2**20  # a metrics page or API answer bigger than this is not one we can use
CHUNK = 1 << 16
_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE | re.MULTILINE)
_CHUNKED = re.compile(rb"^transfer-encoding:.*chunked", re.IGNORECASE | re.MULTILINE)


class FetchError(Exception):
    """Why a host could not be read, in a few words ("connection refused", "HTTP 404 Not Found")."""


def _context(ca_file: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()


class _Received:
    """What http.client.HTTPResponse reads from: the answer's bytes, already all here."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, *args: object, **kwargs: object) -> io.BytesIO:
        return io.BytesIO(self._data)


class _Answer:
    """An answer as it arrives, kept as the chunks read (joined once at the end: a buffer grown chunk by chunk,
    128 of them at once, left the allocator's heap fragmented and the process's memory far above what it held),
    with what tells whether it is whole (for servers that keep the connection open)."""

    END = b"\r\n0\r\n\r\n"  # the last chunk of a chunked body

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self._start = b""  # the bytes before the end of the head, until it is found
        self._body_at: int | None = None  # where the body starts
        self._length: int | None = None
        self._chunked = False
        self._tail = b""

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.size += len(chunk)
        self._tail = (self._tail + chunk)[-len(self.END) :]
        if self._body_at is None:
            self._start += chunk
            end = self._start.find(b"\r\n\r\n")
            if end >= 0:
                head, self._start = self._start[:end], b""
                self._body_at = end + 4
                if (length := _LENGTH.search(head)) is not None:
                    self._length = int(length.group(1))
                self._chunked = _CHUNKED.search(head) is not None

    def complete(self) -> bool:
        if self._body_at is None:
            return False
        if self._length is not None:
            return self.size - self._body_at >= self._length
        return self._chunked and self._tail == self.END

    def data(self) -> bytes:
        return b"".join(self.chunks)


def _request(parts: urllib.parse.SplitResult, accept: str, keep: bool) -> bytes:
    host = parts.hostname or ""
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    netloc = f"[{host}]" if ":" in host else host
    return (
        f"GET {path} HTTP/1.1\r\nHost: {netloc}{f':{parts.port}' if parts.port else ''}\r\n"
        f"Accept: {accept}\r\nUser-Agent: gpudash/{__version__}\r\n"
        + ("" if keep else "Connection: close\r\n")
        + "\r\n"
    ).encode("latin-1")


async def _ask(
    connection: Connection, request: bytes, hold: Hold | None = None, max_bytes: int | None = None
) -> tuple[bytes, bool]:
    """Send the request and read the answer: its bytes, and whether it ended by its own framing (so the
    connection may carry another) rather than by the server closing."""
    connection.writer.write(request)
    await connection.writer.drain()
    received = _Answer()
    try:
        while chunk := await connection.reader.read(CHUNK):
            if hold is not None and not hold.take(len(chunk)):
                raise FetchError(hold.budget.reason)
            received.add(chunk)
            limit = MAX_BYTES if max_bytes is None else max_bytes  # None: the module's (tests lower it)
            if received.size > limit:
                raise FetchError(f"answer larger than {limit // 2**20} MiB")
            if received.complete():
                return received.data(), True
        return received.data(), False
    except BaseException:
        # The exception's traceback keeps this frame, and asyncio.wait_for makes that a reference cycle, freed
        # only when the cyclic collector runs: let go of what was read now (128 such answers held 1.3 GB).
        received.chunks.clear()
        raise


async def _exchange(
    parts: urllib.parse.SplitResult,
    accept: str,
    ca_file: str | None,
    connections: Connections | None,
    hold: Hold | None = None,
    max_bytes: int | None = None,
) -> http.client.HTTPResponse | None:
    host = parts.hostname or ""
    tls = _context(ca_file) if parts.scheme == "https" else None
    key: Key = (parts.scheme, host, parts.port or (443 if tls else 80))
    request = _request(parts, accept, keep=connections is not None)
    pool = connections if connections is not None else Connections(idle_limit=0)
    kept = pool.take(key)
    if kept is not None:
        try:
            data, framed = await _ask(kept, request, hold, max_bytes)
        except (ConnectionError, asyncio.IncompleteReadError):
            data, framed = b"", False
        except BaseException:
            kept.close()
            raise
        if data:
            return _settle(pool, key, kept, data, framed)
        kept.close()  # closed by the server since its last answer: once more on a new connection
    connection = await pool.open(key, tls, host if tls else None)
    try:
        data, framed = await _ask(connection, request, hold, max_bytes)
    except BaseException:
        connection.close()  # cancelled by the deadline, or failed: never kept
        raise
    return _settle(pool, key, connection, data, framed)


def _settle(
    pool: Connections, key: Key, connection: Connection, data: bytes, framed: bool
) -> http.client.HTTPResponse | None:
    """The answer's parsed head (None when there is no answer); the connection kept when the answer allows."""
    keep = False
    try:
        if not data:
            return None
        response = http.client.HTTPResponse(_Received(data), method="GET")  # type: ignore[arg-type]
        response.begin()
        keep = framed and not response.will_close
        return response
    finally:
        if keep:
            pool.give_back(key, connection)
        else:
            connection.close()


def _body(response: http.client.HTTPResponse) -> bytes:
    if response.status != 200:
        raise FetchError(f"HTTP {response.status} {response.reason}".strip())
    kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
    if kind == "text/html":
        raise FetchError("an HTML page, not metrics (is the path /metrics?)")
    return response.read()


async def fetch(
    url: str,
    timeout_s: float,
    ca_file: str | None = None,
    accept: str = "text/plain",
    connections: Connections | None = None,
    max_bytes: int | None = None,
) -> str:
    """The body of `url`, or FetchError saying in a few words why not; never longer than `timeout_s`.
    `connections`: keep the connection open for the next request to the same server (same event loop).
    `max_bytes`: a longer answer is refused (Prometheus's API answers for a large fleet may be longer)."""
    body = await fetch_bytes(url, timeout_s, ca_file, accept, connections, max_bytes=max_bytes)
    return body.decode("utf-8", errors="replace")


async def fetch_bytes(
    url: str,
    timeout_s: float,
    ca_file: str | None = None,
    accept: str = "text/plain",
    connections: Connections | None = None,
    hold: Hold | None = None,
    max_bytes: int | None = None,
) -> bytes:
    """As fetch, the body undecoded (the scraper decodes it off the event loop); read against `hold`."""
    parts = urllib.parse.urlsplit(url)
    try:
        response = await asyncio.wait_for(_exchange(parts, accept, ca_file, connections, hold, max_bytes), timeout_s)
        if response is None:
            raise FetchError("the server closed the connection without answering")
        return _body(response)
    except FetchError:
        raise
    except (TimeoutError, asyncio.TimeoutError):  # two classes before Python 3.11
        raise FetchError(f"no answer within {timeout_s:g} s") from None
    except ConnectionRefusedError:
        raise FetchError("connection refused") from None
    except socket.gaierror as exc:
        raise FetchError(f"unknown host ({exc.strerror or exc})") from None
    except ssl.SSLError as exc:
        raise FetchError(f"TLS: {exc.reason or exc}") from None
    except http.client.IncompleteRead:
        raise FetchError("the answer was cut off") from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__) from None
