"""One HTTP GET with a hard time limit, for the fleet's scrapes and Prometheus API calls.

The standard library's http.client in a thread pool: the fleet's requests are small GETs, and importing it
with concurrent.futures costs about 30-40 ms here against about 55 ms for httpx and 145 ms for aiohttp, with
no dependency added (benchmarks/http_client_import.py, docs/performance.md). The socket timeout bounds each
wait; the deadline below bounds a server that keeps trickling bytes, so no request outlives its budget.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import urllib.parse

from gpudash import __version__

MAX_BYTES = 32 * 2**20  # a metrics page or API answer bigger than this is not one we can use
CHUNK = 1 << 16


class FetchError(Exception):
    """Why a host could not be read, in a few words ("connection refused", "HTTP 404 Not Found")."""


def _context(ca_file: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()


def get(url: str, timeout_s: float, ca_file: str | None = None, accept: str = "text/plain") -> str:
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    deadline = time.monotonic() + timeout_s
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, parts.port, timeout=timeout_s, context=_context(ca_file))
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=timeout_s)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("GET", path, headers={"Accept": accept, "User-Agent": f"gpudash/{__version__}"})
        response = conn.getresponse()
        if response.status != 200:
            raise FetchError(f"HTTP {response.status} {response.reason}".strip())
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "text/html":
            raise FetchError("an HTML page, not metrics (is the path /metrics?)")
        chunks, size = [], 0
        while True:
            chunk = response.read(CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BYTES:
                raise FetchError(f"answer larger than {MAX_BYTES // 2**20} MiB")
            if time.monotonic() > deadline:
                raise FetchError(f"no complete answer within {timeout_s:g} s")
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", errors="replace")
    except FetchError:
        raise
    except TimeoutError:
        raise FetchError(f"no answer within {timeout_s:g} s") from None
    except ConnectionRefusedError:
        raise FetchError("connection refused") from None
    except socket.gaierror as exc:
        raise FetchError(f"unknown host ({exc.strerror or exc})") from None
    except ssl.SSLError as exc:
        raise FetchError(f"TLS: {exc.reason or exc}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchError(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__) from None
    finally:
        conn.close()
