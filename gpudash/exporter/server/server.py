"""The listening socket, the thread that accepts, and one thread per connection that does everything else.

The accepting thread only accepts and admits (connections.py): it never reads, writes or shakes hands, so no
client can hold it up. Each connection's thread does the TLS handshake (within Limits.handshake_s), waits for
a request (idle_s), reads it whole (read_s from its first byte), checks basic auth, calls the WSGI app and
writes the answer (write_s). A deadline that passes closes the connection. Keep-alive is HTTP/1.1's default.
`reconfigure` swaps the TLS context, the users and the extra headers while serving (a web config read again,
reload.py), `replace_tls` the TLS context alone (--tls-cert/--tls-key read again): a connection shakes hands
with the context in force when it was accepted, and each request is checked against the users in force when it
arrives. The accepting thread only reads the attribute; the swaps happen in the watching threads.
"""

from __future__ import annotations

import contextlib
import errno
import io
import select
import selectors
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from gpudash.exporter.server import http11
from gpudash.exporter.server.basic_auth import BasicAuth
from gpudash.exporter.server.connections import HANDSHAKE, READING, WAITING, Connection, Connections
from gpudash.exporter.server.limits import Limits

_ACCEPT_BURST = 64  # connections accepted before looking at the stop signal again
_BACKLOG = 1024  # connections the kernel queues before accept: a burst waits there instead of its SYN being dropped
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)

App = Callable[[dict[str, Any], Callable[..., Any]], Any]


class Server:
    def __init__(
        self,
        app: App,
        limits: Limits | None = None,
        *,
        tls: ssl.SSLContext | None = None,
        users: dict[str, bytes] | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.app = app
        self.limits = limits or Limits()
        self.tls = tls
        self.auth = BasicAuth(users) if users else None
        self.headers = list(headers)
        self.reconfigured = 0  # how many times reconfigure() or replace_tls() swapped the settings
        self._settings = threading.Lock()  # one swap at a time (the web config's watch and the TLS files')
        self.connections = Connections(self.limits.connection_cap())
        self.out_of_descriptors = 0  # accept() calls refused for want of a file descriptor (EMFILE, ENFILE...)
        self._listener: socket.socket | None = None
        self._stopping = threading.Event()
        self._wake_r: socket.socket | None = None  # wakes the accepting thread to stop; made by start()
        self._wake_w: socket.socket | None = None
        self._acceptor: threading.Thread | None = None

    # -- life -----------------------------------------------------------------------------------------------

    def bind(self, host: str, port: int) -> int:
        """Listen on host:port (port 0: any free one); returns the port. Raises OSError when it cannot."""
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait for TIME_WAIT
            listener.bind((host, port))
            listener.listen(max(_BACKLOG, self.connections.cap))
        except OSError:
            listener.close()
            raise
        listener.setblocking(False)
        self._listener = listener
        return self.port

    @property
    def port(self) -> int:
        assert self._listener is not None
        return int(self._listener.getsockname()[1])

    @property
    def server_address(self) -> tuple[str, int]:
        """(host, port), as socketserver's servers name it."""
        assert self._listener is not None
        host, port = self._listener.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._wake_r, self._wake_w = socket.socketpair()
        self._acceptor = threading.Thread(target=self._accept_loop, name="gpudash serve", daemon=True)
        self._acceptor.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop accepting, shut every connection down and wait (bounded) for their threads to close them."""
        self._stopping.set()
        if self._wake_w is not None:
            with contextlib.suppress(OSError):
                self._wake_w.send(b"x")
        if self._acceptor is not None:
            self._acceptor.join(timeout)
        if self._listener is not None:
            self._listener.close()
        self.connections.shut_all()
        deadline = time.monotonic() + timeout
        while len(self.connections) and time.monotonic() < deadline:
            time.sleep(0.01)
        for end in (self._wake_r, self._wake_w):
            if end is not None:
                end.close()

    shutdown = close  # socketserver's name, which the benchmarks and the screenshot script call

    def reconfigure(
        self,
        *,
        tls: ssl.SSLContext | None,
        users: dict[str, bytes] | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        keep_tls: bool = False,
    ) -> None:
        """New TLS context, basic-auth users and extra headers for the connections and requests from now on.
        A server that serves plain HTTP stays plain, and HTTPS stays HTTPS (clients and Prometheus's scrape
        configs expect one scheme): ValueError when `tls` would switch it. `keep_tls` leaves the context in
        force (--tls-cert/--tls-key's, which replace_tls swaps) and ignores `tls`."""
        auth = BasicAuth(users) if users else None  # built first: each attribute below is swapped whole
        with self._settings:
            if keep_tls:
                tls = self.tls
            if (tls is None) != (self.tls is None):
                raise ValueError("switching between HTTP and HTTPS needs a restart")
            self.tls, self.auth, self.headers = tls, auth, list(headers)
            self.reconfigured += 1

    def replace_tls(self, tls: ssl.SSLContext) -> None:
        """A new TLS context (a renewed certificate) for the handshakes from now on; connections already
        accepted keep theirs. ValueError on a server that serves plain HTTP."""
        with self._settings:
            if self.tls is None:
                raise ValueError("switching between HTTP and HTTPS needs a restart")
            self.tls = tls
            self.reconfigured += 1

    # -- accepting ------------------------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None and self._wake_r is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._stopping.is_set():
                for key, _ in selector.select():
                    if key.fileobj is self._wake_r:
                        return
                    self._accept_ready()

    def _accept_ready(self) -> None:
        assert self._listener is not None
        for _ in range(_ACCEPT_BURST):
            try:
                sock, peer = self._listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:
                    self.out_of_descriptors += 1
                if exc.errno in _OUT_OF_DESCRIPTORS and not self.connections.evict_one():
                    self._stopping.wait(0.05)  # nothing to close: let answers finish rather than spin
                if exc.errno in _OUT_OF_DESCRIPTORS:
                    return
                continue  # the client gave up between its SYN and our accept
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self.tls  # the context this connection shakes hands with, whatever a reload does meanwhile
            conn = Connection(sock, peer, state=HANDSHAKE if tls else WAITING)
            if not self.connections.admit(conn):
                sock.close()
                continue
            try:
                threading.Thread(
                    target=self._serve, args=(conn, tls), name="gpudash serve connection", daemon=True
                ).start()
            except RuntimeError:  # no thread to be had: the connection cannot be served
                self.connections.close(conn)

    # -- one connection ---------------------------------------------------------------------------------------

    def _serve(self, conn: Connection, tls: ssl.SSLContext | None) -> None:
        try:
            if tls is not None:
                self._handshake(conn, tls)
            self._requests(conn)
        except Exception:  # a connection's failure ends that connection, never the server or a traceback
            pass
        finally:
            self.connections.close(conn)

    def _handshake(self, conn: Connection, context: ssl.SSLContext) -> None:
        deadline = conn.since + self.limits.handshake_s
        sock = self.connections.wrap(conn, context)
        sock.setblocking(False)
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        while True:
            try:
                sock.do_handshake()
                return
            except ssl.SSLWantReadError:
                poller.modify(sock.fileno(), select.POLLIN)
            except ssl.SSLWantWriteError:
                poller.modify(sock.fileno(), select.POLLOUT)
            remaining = deadline - time.monotonic()
            if remaining <= 0 or conn.evicted:
                raise TimeoutError("TLS handshake")
            poller.poll(remaining * 1000)

    def _requests(self, conn: Connection) -> None:
        limits, buffer = self.limits, bytearray()
        while not self._stopping.is_set():
            if not buffer:
                conn.enter(WAITING)
                if not self._receive(conn, buffer, time.monotonic() + limits.idle_s):
                    return
            conn.enter(READING)
            deadline = time.monotonic() + limits.read_s
            while (end := http11.head_end(buffer)) < 0:
                if len(buffer) > limits.max_head_bytes:
                    self._send(conn, http11.refusal(431, "request head too large"))
                    return
                if not self._receive(conn, buffer, deadline):
                    return
            if end > limits.max_head_bytes:
                self._send(conn, http11.refusal(431, "request head too large"))
                return
            try:
                request = http11.parse_head(bytes(buffer[: end - 4]))
                length = request.body_length
            except http11.BadRequest as exc:
                self._send(conn, http11.refusal(exc.status, str(exc)))
                return
            del buffer[:end]
            if length > limits.max_body_bytes:
                self._send(conn, http11.refusal(413, "a scrape has no body"))
                return
            while len(buffer) < length:
                if not self._receive(conn, buffer, deadline):
                    return
            del buffer[:length]
            auth = self.auth  # the users in force now (a reload swaps the whole object)
            if auth is not None and not auth.check(
                request.headers.get("authorization"), lambda: conn.evicted, deadline
            ):
                if not conn.evicted:
                    self._send(conn, http11.refusal(401, "user and password needed", [("WWW-Authenticate", "Basic")]))
                return
            if not self.connections.begin_answer(conn):
                return
            status, headers, body = self._call_app(request, conn)
            keep_alive = request.keep_alive and not self._stopping.is_set()
            if not self._send(conn, http11.answer(status, headers + self.headers, body, keep_alive)) or not keep_alive:
                return

    def _receive(self, conn: Connection, buffer: bytearray, deadline: float) -> bool:
        """Append what arrives before `deadline` to buffer; False at the deadline, end of stream or an error."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or conn.evicted:
            return False
        try:
            conn.sock.settimeout(remaining)
            chunk = conn.sock.recv(65536)
        except (OSError, ValueError):  # TimeoutError and ssl.SSLError are OSErrors
            return False
        buffer += chunk
        return bool(chunk)

    def _send(self, conn: Connection, data: bytes) -> bool:
        """Write all of `data` within Limits.write_s (in total, not per send); False when it could not."""
        deadline, view, sent = time.monotonic() + self.limits.write_s, memoryview(data), 0
        try:
            while sent < len(view):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or conn.evicted:
                    return False
                conn.sock.settimeout(remaining)
                sent += conn.sock.send(view[sent : sent + 262144])
        except (OSError, ValueError):
            return False
        return True

    def _call_app(self, request: http11.Request, conn: Connection) -> tuple[str, list[tuple[str, str]], bytes]:
        address = (self._listener.getsockname()[0], self.port) if self._listener is not None else ("", 0)
        environ = request.environ(self.tls is not None, address, conn.peer)
        environ.update(
            {
                "wsgi.version": (1, 0),
                "wsgi.input": io.BytesIO(b""),
                "wsgi.errors": sys.stderr,
                "wsgi.multithread": True,
                "wsgi.multiprocess": False,
                "wsgi.run_once": False,
            }
        )
        started: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            started["status"], started["headers"] = status, list(headers)

        try:
            body = b"".join(self.app(environ, start_response))
        except Exception as exc:  # the app broke: say so to the client, keep serving
            text = f"500 Internal Server Error: {type(exc).__name__}\n".encode()
            return "500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")], text
        return started.get("status", "200 OK"), started.get("headers", []), body
