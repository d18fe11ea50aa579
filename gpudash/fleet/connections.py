"""Kept-open HTTP connections for the fleet's requests: at most one idle connection per server.

The exporters a fleet runs (dcgm-exporter, AMD's device-metrics-exporter, node_exporter; Prometheus itself)
are Go's net/http servers, which keep a connection open after an answer. Opening a new one for every host in
every round costs a TCP handshake, and with TLS a TLS handshake, per host per round. A connection carries one
request at a time; it is given back only after a whole answer (framed by its length or chunks) that did not
ask to close. Everything here runs on the fleet's one event-loop thread (gpudash.fleet.io_loop), so no lock.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

Key = tuple[str, str, int]  # scheme, host, port


@dataclass
class Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def close(self) -> None:
        self.writer.close()


def _idle_limit() -> int:
    """Idle connections kept at most: half the process's file-descriptor limit, so a fleet of 1000 hosts under
    the common soft limit of 1024 keeps what fits and opens the rest per request as before."""
    if resource is None:
        return 256
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 4096 if soft == resource.RLIM_INFINITY else max(0, soft // 2)


class Connections:
    def __init__(self, idle_limit: int | None = None) -> None:
        self.idle_limit = _idle_limit() if idle_limit is None else idle_limit
        self._idle: dict[Key, Connection] = {}
        self.opened = 0  # connections opened so far (a benchmark and the tests read it)

    def take(self, key: Key) -> Connection | None:
        """The idle connection to this server, now busy with the caller's request; None when there is none."""
        return self._idle.pop(key, None)

    async def open(self, key: Key, tls: ssl.SSLContext | None, server_hostname: str | None) -> Connection:
        _scheme, host, port = key
        reader, writer = await asyncio.open_connection(host, port, ssl=tls, server_hostname=server_hostname)
        self.opened += 1
        return Connection(reader, writer)

    def give_back(self, key: Key, connection: Connection) -> None:
        """Keep it for the next request to this server, unless one is kept already or the limit is reached."""
        if key in self._idle or len(self._idle) >= self.idle_limit or connection.reader.at_eof():
            connection.close()
        else:
            self._idle[key] = connection

    def close(self) -> None:
        for connection in self._idle.values():
            connection.close()
        self._idle.clear()

    @property
    def idle(self) -> int:
        """Connections kept for a next request. (Not __len__: an empty pool must not read as no pool.)"""
        return len(self._idle)
