"""`gpudash serve`: publish gpudash's metrics for Prometheus, or write them once as a node_exporter textfile.

The HTTP endpoint (gpudash.exporter.http's app on gpudash.exporter.server) answers as prometheus_client's
does; what changes only with a remembered result is encoded once per change, so a scrape costs a few
milliseconds and never runs device code. No client can stall another: TLS handshakes happen in each
connection's own thread, every phase of a connection has a deadline, and open connections are capped. TLS and
basic auth come from --tls-cert/--tls-key or a web config file in exporter-toolkit's format, each read again
while serving when a file changes (a renewed certificate), as exporter-toolkit does
(gpudash.exporter.server.reload). The default address is loopback: publishing to the network is a choice the
user makes with `--listen`, ideally with TLS.
"""

from __future__ import annotations

import ipaddress
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudash.errors import GpudashError, UsageError

DEFAULT_PORT = 9483
# The config's [serve] keys for the server's deadlines and sizes -> gpudash.exporter.server.Limits' fields
SERVE_LIMITS = {
    "handshake_timeout_s": "handshake_s",
    "idle_timeout_s": "idle_s",
    "read_timeout_s": "read_s",
    "write_timeout_s": "write_s",
    "max_head_bytes": "max_head_bytes",
    "max_body_bytes": "max_body_bytes",
}


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def url(self, tls: bool, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if tls else 'http'}://{host}:{port if port is not None else self.port}/metrics"


def parse_listen(text: str, option: str = "--listen") -> Listen:
    """ "HOST:PORT", "[IPv6]:PORT" or a bare "PORT" (on 127.0.0.1); port 0 picks a free one."""
    text = text.strip()
    host, port = "127.0.0.1", text
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1 : end + 2] != ":":
            raise UsageError(f"{option} {text}: expected [IPV6]:PORT, e.g. [::1]:{DEFAULT_PORT}")
        host, port = text[1:end], text[end + 2 :]
    elif ":" in text:
        host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(
            f"{option} {text}: expected HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:{DEFAULT_PORT}"
        )
    return Listen(host, int(port))


def tls_files(cert: str | None, key: str | None) -> tuple[str, str] | None:
    if not cert and not key:
        return None
    if not (cert and key):
        missing = "--tls-key" if cert else "--tls-cert"
        raise UsageError(f"{missing}: TLS needs both a certificate (--tls-cert) and its private key (--tls-key)")
    from gpudash.fileio import check_input_file

    check_input_file(cert, "--tls-cert", "a PEM certificate")  # a FIFO is named as one, never waited on
    check_input_file(key, "--tls-key", "a PEM private key")
    return cert, key


@dataclass(frozen=True)
class Endpoint:
    """How serve answers, checked before any work starts: the address, TLS (an ssl.SSLContext, or None for
    plain HTTP), basic-auth users (name -> bcrypt hash), extra answer headers, the connection limits
    (gpudash.exporter.server.Limits), and the web config file they came from (read again while serving) with
    what it said at start."""

    listen: Listen
    tls: Any = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    limits: Any = None
    web_config: str | None = None
    web_config_option: str = "--web-config"
    web: Any = None  # the WebConfig read at start
    tls_from_options: bool = False  # --tls-cert/--tls-key, not the web config, set TLS
    tls_files: tuple[str, str] | None = None  # (--tls-cert, --tls-key): loaded again when either changes

    def url(self, port: int | None = None) -> str:
        return self.listen.url(self.tls is not None, port)


def endpoint(
    listen: Listen,
    *,
    tls: tuple[str, str] | None = None,
    web_config: str | None = None,
    web_config_option: str = "--web-config",
    max_connections: int | None = None,
    limits: dict[str, Any] | None = None,
) -> Endpoint:
    """Read the web config and load the certificate now, so a bad file is one line (exit 2) before any device
    is discovered. `tls` is (--tls-cert, --tls-key); the web config's tls_server_config is the other way.
    `limits` is the config's [serve] table (checked when it was loaded): its deadlines and sizes
    (SERVE_LIMITS); `max_connections` the cap, from --max-connections or the same table."""
    from gpudash.exporter.server import Limits, TLSSettings, WebConfig, load_web_config
    from gpudash.exporter.server.limits import DEFAULT_MAX_CONNECTIONS
    from gpudash.exporter.server.tls import server_context

    web = load_web_config(web_config, web_config_option) if web_config else WebConfig()
    if tls is not None and web.tls is not None:
        raise UsageError(
            f"{web_config_option} {web_config}: its tls_server_config and --tls-cert/--tls-key both set TLS; give one"
        )
    settings = web.tls or (TLSSettings(*tls) if tls is not None else None)
    context = server_context(settings) if settings is not None else None
    chosen = {field: (limits or {})[key] for key, field in SERVE_LIMITS.items() if key in (limits or {})}
    bounds = Limits(max_connections=max_connections or DEFAULT_MAX_CONNECTIONS, **chosen)
    return Endpoint(
        listen,
        context,
        web.users,
        web.headers,
        bounds,
        web_config=web_config or None,
        web_config_option=web_config_option,
        web=web,
        tls_from_options=tls is not None,
        tls_files=tls,
    )


def start(collector, where: Endpoint):
    """Serve the collector's metrics from a daemon thread (gpudash.exporter.http); returns (server, its port)."""
    from gpudash.exporter.http import MetricsApp
    from gpudash.exporter.http import start as start_server

    listen = where.listen
    try:
        server = start_server(
            MetricsApp(collector), listen.host, listen.port, where.tls, where.limits, where.users, where.headers
        )
    except OSError as exc:
        raise GpudashError(f"cannot listen on {listen.host}:{listen.port}: {exc.strerror or exc}") from None
    return server, server.port


def serve(
    machine,
    config: dict[str, Any],
    where: Endpoint,
    *,
    telemetry: bool = True,
    hostname: str | None = None,
    job_labels: bool = False,
    stop: threading.Event | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until `stop` is set (SIGTERM sets it when called from the main thread); Ctrl-C also stops."""
    from gpudash.exporter import registry_for

    _, collector = registry_for(machine, config, telemetry=telemetry, hostname=hostname, job_labels=job_labels)
    collector.families()  # parse the remembered results and decide the settings before the first scrape
    server, port = start(collector, where)
    watches: list[Any] = []
    if where.web_config:
        from gpudash.exporter.server.reload import WebConfigWatch

        watches.append(
            WebConfigWatch(
                server,
                where.web_config,
                where.web,
                option=where.web_config_option,
                tls_from_options=where.tls_from_options,
            )
        )
    if where.tls_files is not None:
        from gpudash.exporter.server.reload import TLSFilesWatch

        watches.append(TLSFilesWatch(server, *where.tls_files))
    for watch in watches:
        watch.start()
    stop = stop or threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        if on_ready:
            on_ready(where.url(port))
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for watch in watches:
            watch.close()
        server.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def write_textfile(machine, config: dict[str, Any], path: str, hostname: str | None = None) -> str:
    """The batch results (no telemetry: a file is not live) as a node_exporter textfile, through gpudash's own
    writer (gpudash.fileio): a regular file or a new path, replaced whole (a full disk leaves the old file), its
    mode and owner kept, a read-only one only with --force; a link, device, FIFO or folder is refused (exit 2).
    Returns CREATED or REPLACED."""
    from gpudash.exporter import registry_for
    from gpudash.exporter.textfile import textfile_text
    from gpudash.fileio import check_output, write_output

    if Path(path).suffix != ".prom":
        raise UsageError(f"--textfile {path}: node_exporter's textfile collector reads only *.prom files")
    check_output(path, "--textfile", streams=False)  # before the remembered results are read
    _, collector = registry_for(machine, config, telemetry=False, hostname=hostname)
    text = textfile_text(collector, path)  # every series labelled textfile="NAME.prom": files never collide
    try:
        return write_output(path, text, streams=False)
    except GpudashError as exc:
        raise type(exc)(f"--textfile {exc}") from None
