"""One HTTP/1.1 request head parsed into a WSGI environ, and one answer written out: just what a scrape needs.

A scrape is `GET /metrics` with a few headers and no body. Anything else that is still HTTP gets a status (405
from the app, 400, 413, 431, 501, 505) and, when the framing can no longer be trusted, the connection closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VERSIONS = ("HTTP/1.0", "HTTP/1.1")
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    405: "Method Not Allowed",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


class BadRequest(Exception):
    """A request answered with `status` and the connection closed."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str
    version: str
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "

    @property
    def keep_alive(self) -> bool:
        tokens = {t.strip().lower() for t in self.headers.get("connection", "").split(",")}
        return self.version == "HTTP/1.1" and "close" not in tokens

    @property
    def body_length(self) -> int:
        if "transfer-encoding" in self.headers:
            raise BadRequest(501, "a request body in chunks is not accepted")
        text = self.headers.get("content-length", "0").strip()
        if not text.isdigit():
            raise BadRequest(400, "bad Content-Length")
        return int(text)

    def environ(self, tls: bool, server: tuple[str, int], peer: Any) -> dict[str, Any]:
        env: dict[str, Any] = {
            "REQUEST_METHOD": self.method,
            "SCRIPT_NAME": "",
            "PATH_INFO": self.path,
            "QUERY_STRING": self.query,
            "SERVER_PROTOCOL": self.version,
            "SERVER_NAME": server[0],
            "SERVER_PORT": str(server[1]),
            "REMOTE_ADDR": peer[0] if isinstance(peer, tuple) else "",
            "wsgi.url_scheme": "https" if tls else "http",
        }
        for name, value in self.headers.items():
            key = name.upper().replace("-", "_")
            if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                env[key] = value
            else:
                env[f"HTTP_{key}"] = value
        return env


def head_end(buffer: bytes | bytearray) -> int:
    """The index just past the blank line that ends the head, or -1 while it has not arrived."""
    end = buffer.find(b"\r\n\r\n")
    return -1 if end < 0 else end + 4


def parse_head(raw: bytes) -> Request:
    lines = raw.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1]:
        raise BadRequest(400, "bad request line")
    method, target, version = (p.decode("latin-1") for p in parts)
    if version not in _VERSIONS:
        raise BadRequest(505 if version.startswith("HTTP/") else 400, "unsupported HTTP version")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):  # also refuses obsolete line folding
            raise BadRequest(400, "bad header line")
        key, text = name.decode("latin-1").lower(), value.strip(b" \t").decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    path, _, query = target.partition("?")
    return Request(method, unquote(path), query, version, headers)


def answer(status: str | int, headers: list[tuple[str, str]], body: bytes, keep_alive: bool) -> bytes:
    """The bytes of one answer: status line, headers, Content-Length, Connection, body."""
    if isinstance(status, int):
        status = f"{status} {_REASONS.get(status, '')}".rstrip()
    lines = [f"HTTP/1.1 {status}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in ("content-length", "connection")]
    lines.append(f"Content-Length: {len(body)}")
    lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def refusal(status: int, why: str, extra: list[tuple[str, str]] | None = None) -> bytes:
    body = f"{status} {_REASONS.get(status, '')}: {why}\n".encode()
    return answer(status, [("Content-Type", "text/plain; charset=utf-8"), *(extra or [])], body, keep_alive=False)
