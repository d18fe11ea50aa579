"""Which endpoints to scrape: `--hosts a:9483,b:9400`, a hostfile (one per line, # comments), or URLs.

A bare host gets gpudash serve's port (9483) and /metrics; `host:9400` reaches dcgm-exporter, `host:5000`
AMD's exporter, `https://host:9483/metrics` a gpudash serving TLS. At most 1000 endpoints, like all-smi.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from gpudash.errors import UsageError
from gpudash.fileio import read_user_file

DEFAULT_PORT = 9483
MAX_TARGETS = 1000


@dataclass(frozen=True)
class Target:
    url: str  # the full URL of the metrics page
    host: str  # the host part, the host's name when its series carry no hostname label
    label: str  # as the user wrote it

    @property
    def tls(self) -> bool:
        return self.url.startswith("https://")


def parse_target(text: str, where: str) -> Target:
    raw = text.strip()
    url = raw if "://" in raw else f"http://{raw}"
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"{where}: {raw!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{where}: {raw!r}: expected HOST[:PORT] or an http(s):// URL")
    host = parts.hostname
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port if port is not None else (DEFAULT_PORT if '://' not in raw else '')}".rstrip(":")
    path = parts.path if parts.path not in ("", "/") else "/metrics"
    query = f"?{parts.query}" if parts.query else ""
    return Target(f"{parts.scheme}://{netloc}{path}{query}", host, raw)


def hostfile_entries(path: str) -> list[tuple[str, str]]:
    """(entry, "FILE:LINE") for each endpoint in a hostfile; blank lines and # comments are skipped."""
    text = read_user_file(path, "hostfile", UsageError)
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if entry:
            out.append((entry, f"{path}:{number}"))
    return out


def targets_from(hosts: Iterable[str] = (), hostfile: str | None = None) -> list[Target]:
    """Endpoints from --hosts values (each may hold a comma-separated list) and a hostfile, in order, once each."""
    entries = [(h, "--hosts") for value in hosts for h in value.split(",") if h.strip()]
    if hostfile:
        entries += hostfile_entries(hostfile)
    seen: dict[str, Target] = {}
    for entry, where in entries:
        target = parse_target(entry, where)
        seen.setdefault(target.url, target)
    if len(seen) > MAX_TARGETS:
        raise UsageError(f"--hosts/--hostfile: {len(seen)} endpoints; at most {MAX_TARGETS} (use --prometheus)")
    return list(seen.values())
