"""`gpudash serve`'s HTTP endpoint: prometheus_client's encoders, with the slow-changing part cached as text.

Formatting is most of a scrape's cost (prometheus_client escapes every label of every sample: about 6 ms for
the ~800 samples of an 8-GPU node with remembered results), and all but the live telemetry changes only when
someone probes, benchmarks or checks. So the batch families are encoded once per change on disk, per output
format and `name[]` filter, and only the telemetry is encoded at each scrape. The app is prometheus_client's
in what it answers (formats chosen from the Accept header, OpenMetrics included; gzip when accepted;
`name[]` filtering; OPTIONS and 405 as it does); the server is gpudash.exporter.server, where no client can
stall another: TLS handshakes in each connection's own thread, deadlines on every phase, a connection cap.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from prometheus_client.exposition import choose_encoder, gzip_accepted

if TYPE_CHECKING:
    import ssl

    from gpudash.exporter.server import Limits, Server

OPENMETRICS_END = b"# EOF\n"
CACHED_OUTPUTS = 16  # (format, filter) pairs kept; Prometheus and the fleet view use one or two each


class _Families:
    """What prometheus_client's encoders read: an object whose collect() yields metric families."""

    def __init__(self, families: Iterable[Any]) -> None:
        self._families = list(families)

    def collect(self) -> Iterable[Any]:
        return iter(self._families)


def _wanted(families: list[Any], names: frozenset[str] | None) -> list[Any]:
    """The families with samples (an empty one is left out, as the collector's collect() does), by `name[]`."""
    return [f for f in families if f.samples and (names is None or f.name in names or f.samples[0].name in names)]


class MetricsApp:
    """A WSGI app over a GpudashCollector (batch_families(), live_families(), batch_signature())."""

    def __init__(self, collector: Any) -> None:
        self.collector = collector
        self._cache: dict[tuple[str, frozenset[str] | None], tuple[Any, bytes]] = {}
        self._lock = threading.Lock()

    def render(self, accept: str | None, names: frozenset[str] | None) -> tuple[bytes, str]:
        encoder, content_type = choose_encoder(accept or "")
        batch, signature = self.collector.batch_families()
        key = (content_type, names)
        with self._lock:
            held = self._cache.get(key)
            if held is None or held[0] != signature:
                if len(self._cache) >= CACHED_OUTPUTS:
                    self._cache.clear()
                text = encoder(_Families(_wanted(batch, names)))
                held = self._cache[key] = (signature, text.removesuffix(OPENMETRICS_END))
        live = encoder(_Families(_wanted(self.collector.live_families(), names)))
        return held[1] + live, content_type  # OpenMetrics: the live part carries the one "# EOF"

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        method = environ["REQUEST_METHOD"]
        if method == "OPTIONS":
            start_response("200 OK", [("Allow", "OPTIONS,GET")])
            return [b""]
        if method != "GET":
            start_response("405 Method Not Allowed", [("Allow", "OPTIONS,GET")])
            return [f"# HTTP 405 Method Not Allowed: {method}; use OPTIONS or GET\n".encode()]
        if environ.get("PATH_INFO") == "/favicon.ico":
            start_response("200 OK", [])
            return [b""]
        params = parse_qs(environ.get("QUERY_STRING", ""))
        names = frozenset(params["name[]"]) if "name[]" in params else None
        output, content_type = self.render(environ.get("HTTP_ACCEPT"), names)
        headers = [("Content-Type", content_type)]
        if gzip_accepted(environ.get("HTTP_ACCEPT_ENCODING", "")):
            import gzip

            output = gzip.compress(output)
            headers.append(("Content-Encoding", "gzip"))
        start_response("200 OK", headers)
        return [output]


def start(
    app: MetricsApp,
    host: str,
    port: int,
    tls: ssl.SSLContext | None = None,
    limits: Limits | None = None,
    users: dict[str, bytes] | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> Server:
    """Serve `app` on host:port (port 0: any free one) from a daemon thread; TLS with the given context, basic
    auth for `users` (name -> bcrypt hash). Raises OSError when the address cannot be bound."""
    from gpudash.exporter.server import Server

    server = Server(app, limits, tls=tls, users=users, headers=headers)
    server.bind(host, port)
    server.start()
    return server
