"""The web configuration file Prometheus's exporters share (prometheus/exporter-toolkit,
docs/web-configuration.md): `tls_server_config`, `http_server_config` and `basic_auth_users`.

Read as exporter-toolkit reads it: YAML, unknown keys refused, relative paths taken from the file's own folder,
bcrypt hashes checked for form (not computed: that costs tens of milliseconds per user and is done, then cached,
at the first request). What gpudash cannot honour is refused rather than ignored, since a file that asks for
client-certificate SAN checks or a rate limit expects them: inline `cert`/`key`, `cipher_suites`,
`curve_preferences`, `client_allowed_sans`, `rate_limit`, and the client-auth types that take a certificate
without verifying it (`RequestClientCert`, `RequireAnyClientCert`), which Python's ssl module cannot express.
Every problem is one line naming the option, the file and the key (exit code 2).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpudash.errors import UsageError

MAX_FILE_BYTES = 1 << 20
TLS_VERSIONS = ("TLS10", "TLS11", "TLS12", "TLS13")
CLIENT_AUTH = {  # exporter-toolkit's names (Go's tls.ClientAuthType) -> what Python's ssl can do
    "NoClientCert": "none",
    "VerifyClientCertIfGiven": "optional",
    "RequireAndVerifyClientCert": "required",
}
UNSUPPORTED_CLIENT_AUTH = ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert")
TLS_KEYS = (
    "cert_file",
    "key_file",
    "client_ca_file",
    "client_ca",
    "client_auth_type",
    "min_version",
    "max_version",
    "prefer_server_cipher_suites",
)
UNSUPPORTED_TLS_KEYS = {
    "cert": "use cert_file",
    "key": "use key_file",
    "cipher_suites": "Python's ssl names ciphers differently; gpudash uses OpenSSL's defaults",
    "curve_preferences": "gpudash uses OpenSSL's defaults",
    "client_allowed_sans": "not implemented",
}
TOP_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users", "rate_limit")
HTTP_KEYS = ("http2", "headers")
# exporter-toolkit's extraHTTPHeaders: the headers a web config may set, and the values allowed where it limits them.
EXTRA_HEADERS: dict[str, tuple[str, ...]] = {
    "Strict-Transport-Security": (),
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": (),
    "Content-Security-Policy": (),
}
# $2a$, $2b$ or $2y$ (htpasswd -B writes 2y), a cost from 4 to 31, 22 characters of salt and 31 of hash.
BCRYPT_HASH = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")


@dataclass(frozen=True)
class TLSSettings:
    cert_file: str
    key_file: str
    client_auth: str = "none"  # none, optional or required (CLIENT_AUTH's values)
    client_ca_file: str = ""
    client_ca: str = ""  # PEM text given inline
    min_version: str = "TLS12"  # exporter-toolkit's default
    max_version: str = "TLS13"
    prefer_server_cipher_suites: bool = True
    source: str = "--tls-cert/--tls-key"  # what an error about these settings names


@dataclass(frozen=True)
class WebConfig:
    tls: TLSSettings | None = None
    users: dict[str, bytes] = field(default_factory=dict)  # user name -> bcrypt hash
    headers: tuple[tuple[str, str], ...] = ()  # added to every answer


def load_web_config(path: str, option: str = "--web-config") -> WebConfig:
    """The checked contents of a web configuration file; a problem raises UsageError (one line)."""
    import yaml

    from gpudash.fileio import read_user_file

    text = read_user_file(path, "web config", UsageError, limit=MAX_FILE_BYTES)
    where = f"{option} {path}"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UsageError(f"{where}: not valid YAML: {problem}{line}") from None
    if data is None:
        return WebConfig()  # an empty file: plain HTTP, no users, as exporter-toolkit reads it
    top = _mapping(data, where, "the file", TOP_KEYS)
    if top.get("rate_limit") is not None:
        raise UsageError(f"{where}: rate_limit: not supported by gpudash serve (its connection cap bounds load)")
    folder = Path(path).parent
    return WebConfig(
        tls=_tls(top.get("tls_server_config"), where, folder),
        users=_users(top.get("basic_auth_users"), where),
        headers=_headers(top.get("http_server_config"), where),
    )


def _mapping(value: Any, where: str, key: str, known: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UsageError(f"{where}: {key}: expected a mapping of keys to values, got {type(value).__name__}")
    for name in value:
        if name not in known:
            raise UsageError(f"{where}: {key}: unknown key {name!r} (known: {', '.join(known)})")
    return value


def _text(value: Any, where: str, key: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UsageError(f"{where}: {key}: expected a string, got {type(value).__name__} {value!r}")
    return value


def _file(value: Any, where: str, key: str, folder: Path) -> str:
    """A path named in the file, relative to the file's folder as exporter-toolkit takes it; a regular file."""
    name = _text(value, where, key)
    if not name:
        return ""
    target = Path(name) if os.path.isabs(name) else folder / name
    try:
        st = os.stat(target)
    except OSError as exc:
        raise UsageError(f"{where}: {key}: {target}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{where}: {key}: {target}: not a regular file")
    return str(target)


def _tls(value: Any, where: str, folder: Path) -> TLSSettings | None:
    if value is None:
        return None
    if isinstance(value, dict):
        for name, hint in UNSUPPORTED_TLS_KEYS.items():
            if value.get(name) not in (None, "", []):
                raise UsageError(f"{where}: tls_server_config.{name}: not supported by gpudash serve ({hint})")
    known = TLS_KEYS + tuple(UNSUPPORTED_TLS_KEYS)
    tls = _mapping(value, where, "tls_server_config", known)
    if not any(tls.get(k) not in (None, "") for k in TLS_KEYS):
        return None  # nothing set: plain HTTP
    key = "tls_server_config"
    auth_name = _text(tls.get("client_auth_type"), where, f"{key}.client_auth_type") or "NoClientCert"
    if auth_name in UNSUPPORTED_CLIENT_AUTH:
        raise UsageError(
            f"{where}: {key}.client_auth_type: {auth_name} is not supported by gpudash serve "
            "(it accepts a certificate without verifying it); use RequireAndVerifyClientCert"
        )
    if auth_name not in CLIENT_AUTH:
        raise UsageError(
            f"{where}: {key}.client_auth_type: expected one of {', '.join(CLIENT_AUTH)}, got {auth_name!r}"
        )
    cert = _file(tls.get("cert_file"), where, f"{key}.cert_file", folder)
    private = _file(tls.get("key_file"), where, f"{key}.key_file", folder)
    if not cert or not private:
        missing = "cert_file" if not cert else "key_file"
        raise UsageError(f"{where}: {key}.{missing}: TLS needs both cert_file and key_file")
    ca_file = _file(tls.get("client_ca_file"), where, f"{key}.client_ca_file", folder)
    ca_text = _text(tls.get("client_ca"), where, f"{key}.client_ca")
    if ca_file and ca_text:
        raise UsageError(f"{where}: {key}: give client_ca_file or client_ca, not both")
    client_auth = CLIENT_AUTH[auth_name]
    if client_auth == "none" and (ca_file or ca_text):
        raise UsageError(f"{where}: {key}: a client CA is set but client_auth_type is NoClientCert")
    if client_auth != "none" and not (ca_file or ca_text):
        raise UsageError(f"{where}: {key}: client_auth_type {auth_name} needs client_ca_file")
    versions = []
    for name, default in (("min_version", "TLS12"), ("max_version", "TLS13")):
        version = _text(tls.get(name), where, f"{key}.{name}") or default
        if version not in TLS_VERSIONS:
            raise UsageError(f"{where}: {key}.{name}: expected one of {', '.join(TLS_VERSIONS)}, got {version!r}")
        versions.append(version)
    if TLS_VERSIONS.index(versions[0]) > TLS_VERSIONS.index(versions[1]):
        raise UsageError(f"{where}: {key}: min_version {versions[0]} is above max_version {versions[1]}")
    prefer = tls.get("prefer_server_cipher_suites", True)
    if not isinstance(prefer, bool):
        raise UsageError(f"{where}: {key}.prefer_server_cipher_suites: expected true or false, got {prefer!r}")
    return TLSSettings(
        cert_file=cert,
        key_file=private,
        client_auth=client_auth,
        client_ca_file=ca_file,
        client_ca=ca_text,
        min_version=versions[0],
        max_version=versions[1],
        prefer_server_cipher_suites=prefer,
        source=f"{where}: {key}",
    )


def _users(value: Any, where: str) -> dict[str, bytes]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}: basic_auth_users: expected a mapping of user names to bcrypt hashes")
    users: dict[str, bytes] = {}
    for name, hashed in value.items():
        if not isinstance(name, str) or not name or ":" in name:
            raise UsageError(f"{where}: basic_auth_users: {name!r}: a user name is a non-empty string without ':'")
        if not isinstance(hashed, str) or not BCRYPT_HASH.fullmatch(hashed):
            raise UsageError(
                f"{where}: basic_auth_users.{name}: not a bcrypt hash (expected $2y$10$ and 53 characters, "
                "as `htpasswd -nBC 10 \"\" | tr -d ':\\n'` prints)"
            )
        users[name] = hashed.encode()
    return users


def _headers(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    http = _mapping(value, where, "http_server_config", HTTP_KEYS)
    if not isinstance(http.get("http2", True), bool):  # gpudash serves HTTP/1.1 only; either value is fine
        raise UsageError(f"{where}: http_server_config.http2: expected true or false")
    headers = http.get("headers") or {}
    if not isinstance(headers, dict):
        raise UsageError(f"{where}: http_server_config.headers: expected a mapping of header names to values")
    extra = []
    for name, text in headers.items():
        if name not in EXTRA_HEADERS:
            raise UsageError(
                f"{where}: http_server_config.headers: {name!r} cannot be set (only {', '.join(EXTRA_HEADERS)})"
            )
        if not isinstance(text, str) or "\r" in text or "\n" in text:
            raise UsageError(f"{where}: http_server_config.headers.{name}: expected a one-line string")
        allowed = EXTRA_HEADERS[name]
        if allowed and text not in allowed:
            raise UsageError(
                f"{where}: http_server_config.headers.{name}: expected one of {', '.join(allowed)}, got {text!r}"
            )
        if text:  # blank: unset, as exporter-toolkit says
            extra.append((name, text))
    return tuple(extra)
