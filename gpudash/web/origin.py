"""Who may open a session: the browser's Origin must be the page's own host, and on a loopback server the
page must have been asked for by a loopback name or by the name given to --listen.

Browsers let any web page open a websocket to any address, including 127.0.0.1, and send the page's
Origin with it; refusing a foreign Origin stops another site in the same browser from starting a session
(cross-site websocket hijacking). A non-browser client can send any Origin it likes, but it can also just
connect: that is what the loopback default and a reverse proxy with a login are for (docs/web.md).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_port(netloc: str, scheme: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(f"//{netloc}")
        host, port = parts.hostname, parts.port
    except ValueError:  # a bad port or a stray bracket
        return None
    if not host:
        return None
    return host.lower().rstrip("."), port if port is not None else DEFAULT_PORTS.get(scheme, 0)


def same_origin(origin: str | None, host_header: str | None) -> bool:
    """True when Origin names the host (and port) the request was sent to.

    The scheme is not compared: behind a TLS proxy the browser's Origin is https and the request that
    reaches gpudash is plain http with the same Host (the proxy must pass Host on, docs/web.md).
    """
    if not origin or not host_header or origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.scheme not in DEFAULT_PORTS or parts.path not in ("", "/") or parts.query:
        return False
    mine = _host_port(parts.netloc, parts.scheme)
    served = _host_port(host_header, parts.scheme)
    return mine is not None and mine == served


def loopback_name(host_header: str | None, listen_name: str | None = None) -> bool:
    """True when the Host header names this machine: `localhost`, a loopback address, or the name the server
    was told to listen on (`--listen NAME`, which resolves to loopback or the server would not be loopback-only).

    A loopback server checks this on every request: a page on evil.example whose name an attacker
    re-points to 127.0.0.1 (DNS rebinding) would otherwise pass the Origin check, since its Origin and
    Host agree. The user's own --listen name is no such page: it is the name gpudash prints and must answer on.
    """
    if not host_header:
        return False
    parsed = _host_port(host_header, "http")
    if parsed is None:
        return False
    host = parsed[0]
    if host == "localhost" or host.endswith(".localhost"):
        return True
    if listen_name and host == listen_name.lower().rstrip("."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
