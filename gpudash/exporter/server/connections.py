"""The open connections, capped: which are admitted, and which one is closed to make room for a new one.

Beyond the cap, the connection that has waited longest without a request being answered (a TLS handshake that
never finished, an idle keep-alive, headers arriving a byte at a time) is shut down, unless bytes are waiting
on it (a request about to be read). When every connection is being answered, the newcomer is refused instead.
Connections being shut down still hold their descriptors until their threads close them, so at most twice the
cap are open at once. One lock covers admission, eviction and closing, so a descriptor is never polled or shut
down after its thread closed it.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any

HANDSHAKE = "handshake"  # TLS handshake under way
WAITING = "waiting"  # no request yet, or between keep-alive requests
READING = "reading"  # a request's first bytes arrived, the rest has not
ANSWERING = "answering"  # a whole request is being answered: never evicted


@dataclass(eq=False)
class Connection:
    sock: socket.socket
    peer: Any
    state: str = WAITING
    since: float = field(default_factory=time.monotonic)  # when the current state began
    evicted: bool = False
    closed: bool = False

    def enter(self, state: str) -> None:
        """Another state that may still be evicted; ANSWERING goes through Connections.begin_answer."""
        self.state, self.since = state, time.monotonic()


class Connections:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._open: dict[int, Connection] = {}
        self.refused = 0  # newcomers closed at once: every connection was being answered
        self.evicted = 0  # connections shut down to make room

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, conn: Connection) -> bool:
        with self._lock:
            live = [c for c in self._open.values() if not c.evicted]
            if len(live) >= self.cap:
                victim = _victim(live)
                if victim is not None:
                    self._shut(victim)
                    self.evicted += 1
            still_live = sum(not c.evicted for c in self._open.values())
            if still_live >= self.cap or len(self._open) >= 2 * self.cap:
                self.refused += 1
                return False
            self._open[id(conn)] = conn
            return True

    def begin_answer(self, conn: Connection) -> bool:
        """Mark a whole request as being answered, so no newcomer evicts it; False if it was evicted already."""
        with self._lock:
            if conn.evicted:
                return False
            conn.enter(ANSWERING)
            return True

    def evict_one(self) -> bool:
        """Shut down the longest-waiting connection not being answered (when descriptors run out)."""
        with self._lock:
            victim = _victim([c for c in self._open.values() if not c.evicted])
            if victim is None:
                return False
            self._shut(victim)
            self.evicted += 1
            return True

    def shut_all(self) -> None:
        with self._lock:
            for conn in self._open.values():
                self._shut(conn)

    def wrap(self, conn: Connection, context: ssl.SSLContext) -> ssl.SSLSocket:
        """Put TLS on the connection's socket (no I/O yet: the handshake is the caller's), under the lock, so
        an eviction never shuts down the plain socket object the TLS one just took the descriptor from."""
        with self._lock:
            if conn.evicted:
                raise ConnectionAbortedError("evicted")
            wrapped = context.wrap_socket(conn.sock, server_side=True, do_handshake_on_connect=False)
            conn.sock = wrapped
            return wrapped

    def close(self, conn: Connection) -> None:
        with self._lock:
            self._open.pop(id(conn), None)
            conn.closed = True
            try:
                conn.sock.close()
            except OSError:
                pass

    @staticmethod
    def _shut(conn: Connection) -> None:
        """Wake the connection's thread (its recv, send or handshake returns) without closing the descriptor
        under it. socket.socket.shutdown, not SSLSocket's, which would drop the TLS state the thread is using."""
        conn.evicted = True
        if not conn.closed:
            try:
                socket.socket.shutdown(conn.sock, socket.SHUT_RDWR)
            except OSError:
                pass


def _victim(live: list[Connection]) -> Connection | None:
    """The connection to close for a newcomer: the longest in a state that may be evicted, with nothing to read."""
    candidates = sorted((c for c in live if c.state != ANSWERING and not c.closed), key=lambda c: c.since)
    if not candidates:
        return None
    poller = select.poll()
    by_fd: dict[int, Connection] = {}
    for conn in candidates:
        try:
            fd = conn.sock.fileno()
        except OSError:
            continue
        if fd >= 0:
            by_fd[fd] = conn
            poller.register(fd, select.POLLIN)
    readable = {fd for fd, events in poller.poll(0) if events & (select.POLLIN | select.POLLPRI)}
    for conn in candidates:
        try:
            fd = conn.sock.fileno()
        except OSError:
            continue
        if fd not in readable:
            return conn
    return None
