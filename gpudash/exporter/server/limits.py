"""How long each phase of a connection may take, and how many connections may be open at once."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_CONNECTIONS = 64
FD_RESERVE = 64  # descriptors kept for everything else serve opens: driver children, state files, logs


@dataclass(frozen=True)
class Limits:
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    handshake_s: float = 5.0  # TLS handshake, from accept
    idle_s: float = 20.0  # waiting for a request's first byte: longer than Prometheus's usual 15 s interval
    read_s: float = 10.0  # the whole request (head and body), from its first byte
    write_s: float = 10.0  # the whole answer
    max_head_bytes: int = 16384  # request line and headers; more is 431
    max_body_bytes: int = 65536  # a scrape has no body; more is 413

    def connection_cap(self) -> int:
        """max_connections, lowered so that open connections (and those closing) never use up the process's
        file descriptors: the server keeps at most twice the cap open while evicted ones finish closing."""
        try:
            import resource

            soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        except (ImportError, OSError, ValueError):
            return self.max_connections
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        return max(1, min(self.max_connections, (soft - FD_RESERVE) // 2))
