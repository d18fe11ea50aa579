"""Which endpoints to scrape: `--hosts a:9483,b:9400`, a hostfile, or URLs.

A bare host gets gpudash serve's port (9483) and /metrics; `host:9400` reaches dcgm-exporter, `host:5000`
AMD's exporter, `https://host:9483/metrics` a gpudash serving TLS. At most 1000 endpoints, like all-smi.

A hostfile has one endpoint a line, then optionally the GPUs that host should have (a whole number, 0 for a
host expected to have none); `#` starts a comment, blank lines are skipped:

    gpu-node-01:9483   8
    gpu-node-01:9400   8      # dcgm-exporter on the same node: its row takes the largest count named
    login-node:9483    0
    gpu-node-02                # no count: --expect-gpus, or not checked
"""

from __future__ import annotations

import dataclasses
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
    expect_gpus: int | None = None  # the hostfile's GPU column (gpudash.fleet.verdict); None: not said

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


MAX_GPUS = 1024  # what a host may be expected to have (the config's health.expect_gpus has the same bound)


def hostfile_entries(path: str) -> list[tuple[str, str, int | None]]:
    """(entry, "FILE:LINE", expected GPUs) for each endpoint in a hostfile; blank lines and # comments skipped."""
    text = read_user_file(path, "hostfile", UsageError)
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{path}:{number}"
        if len(words) > 2:
            raise UsageError(f"{where}: {' '.join(words)!r}: expected ENDPOINT [GPUS], e.g. gpu-node-01:9483 8")
        out.append((words[0], where, expected_gpus(words[1], where) if len(words) == 2 else None))
    return out


def expected_gpus(text: str, where: str) -> int:
    """A count of GPUs a host should have, 0 to MAX_GPUS; one line naming `where` otherwise."""
    if not text.isdigit() or int(text) > MAX_GPUS:
        raise UsageError(f"{where}: expected GPUs {text!r}: expected a whole number from 0 to {MAX_GPUS}")
    return int(text)


def targets_from(hosts: Iterable[str] = (), hostfile: str | None = None) -> list[Target]:
    """Endpoints from --hosts values (each may hold a comma-separated list) and a hostfile, in order, once each."""
    entries: list[tuple[str, str, int | None]] = [
        (h, "--hosts", None) for value in hosts for h in value.split(",") if h.strip()
    ]
    if hostfile:
        entries += hostfile_entries(hostfile)
    seen: dict[str, Target] = {}
    for entry, where, gpus in entries:
        target = parse_target(entry, where)
        if gpus is not None:
            target = dataclasses.replace(target, expect_gpus=gpus)
        seen.setdefault(target.url, target)
    if len(seen) > MAX_TARGETS:
        raise UsageError(f"--hosts/--hostfile: {len(seen)} endpoints; at most {MAX_TARGETS} (use --prometheus)")
    return list(seen.values())
