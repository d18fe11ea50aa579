"""The --listen address: parsing, and whether it is reachable from this machine only."""

from __future__ import annotations

from dataclasses import dataclass

from gpudash.errors import UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8642


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def __str__(self) -> str:
        return self.url.removeprefix("http://")


def parse_listen(text: str | None) -> Listen:
    """`HOST:PORT`, `HOST`, `[IPV6]:PORT` or `:PORT` (the default host); None gives the default address."""
    if text is None:
        return Listen(DEFAULT_HOST, DEFAULT_PORT)
    where = f"--listen {text}"
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise UsageError(f"{where}: expected [IPV6]:PORT")
        port_text = rest[1:] if rest else None
    elif text.count(":") > 1:
        raise UsageError(f"{where}: write an IPv6 address in brackets, e.g. [::1]:{DEFAULT_PORT}")
    else:
        host, colon, port_text_or_empty = text.partition(":")
        port_text = port_text_or_empty if colon else None
    host = host or DEFAULT_HOST
    if port_text is None:
        return Listen(host, DEFAULT_PORT)
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise UsageError(f"{where}: the port must be a number from 1 to 65535, got {port_text!r}")
    return Listen(host, int(port_text))


def is_loopback(host: str) -> bool:
    """True when every address `host` stands for is on this machine only (127.0.0.0/8, ::1)."""
    import ipaddress
    import socket

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if host.lower() == "localhost":
        return True
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False  # the server cannot bind it either; that error comes with a clearer line
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def check_listen(listen: Listen, allow_remote: bool) -> bool:
    """Refuse a non-loopback address unless allowed; returns whether the address is remote-reachable."""
    if is_loopback(listen.host):
        return False
    if not allow_remote:
        raise UsageError(
            f"--listen {listen}: not a loopback address; gpudash web has no authentication, so serving "
            "other machines needs --allow-remote (and a proxy with a login in front: docs/web.md)"
        )
    return True
