"""The web config, and the certificate and key of --tls-cert/--tls-key, read again while serving, as
exporter-toolkit reads its web config, so certificates and users change without a restart.

A thread of its own (never the accepting one, never a connection's) looks at the file once a second, and at the
certificate, key and client CA files the last good config named: a change of any one's modification time, size,
inode (an editor's or a deployment's rename) or contents reads the file again, checks it as at start (web_config.py) and
loads its certificate (tls.py). A good config replaces the server's TLS context, users and headers at once
(Server.reconfigure). A bad one, or one that would switch between HTTP and HTTPS or set TLS beside
--tls-cert/--tls-key, changes nothing: the server goes on with the last good config, and stderr gets one warning
per change of the files (not one a second).

TLSFilesWatch does the same for --tls-cert/--tls-key (or the config's [serve] tls_cert/tls_key): a renewed
certificate written in place, renamed over the old one or behind a symlink that moves (certbot's live/,
cert-manager's and Kubernetes' mounted secrets) is loaded with its key and served from the next handshake on
(Server.replace_tls). A pair that cannot be used (a file unreadable or half-written, a key that is not the
certificate's, as between the two writes of a renewal) keeps the last good certificate, with one warning naming
the file; the pair is tried again at the next change of either file.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from gpudash.exporter.server.web_config import WebConfig

CHECK_EVERY_S = 1.0

Stamp = tuple[str, int, int, int, str] | tuple[str, str]


def _stamp(path: str) -> Stamp:
    """What tells a change of the file: its stat, and a digest of what it holds, so that a rewrite in place of
    the same size within the file system's timestamp granularity is seen too (these files are a few KiB)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return (path, type(exc).__name__)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino, _digest(path))


def _named_files(web: WebConfig) -> list[str]:
    if web.tls is None:
        return []
    return [f for f in (web.tls.cert_file, web.tls.key_file, web.tls.client_ca_file) if f]


class _Watch:
    """A daemon thread that calls check() every `every_s` until close(); check() never raises out of it."""

    name = "gpudash serve watch"
    what = "file"

    def __init__(self, every_s: float, say: Callable[[str], None] | None) -> None:
        self.every_s = every_s
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0  # good changes applied
        self.refused = 0  # changes that left the last good settings in force

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.check()
            except Exception as exc:  # never stop serving over the watch itself
                self.say(f"gpudash: warning: {self.what}: not read again: {type(exc).__name__}: {exc}")

    def check(self) -> bool:
        raise NotImplementedError


class WebConfigWatch(_Watch):
    """Reads `path` again when it or a file it names changes, and reconfigures `server` with what it says."""

    name = "gpudash serve web config"

    def __init__(
        self,
        server,
        path: str,
        first: WebConfig,
        *,
        option: str = "--web-config",
        tls_from_options: bool = False,
        every_s: float = CHECK_EVERY_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(every_s, say)
        self.server = server
        self.path = path
        self.option = option
        self.what = f"{option} {path}"
        self.tls_from_options = tls_from_options  # --tls-cert/--tls-key serve TLS: the file must not set it too
        self._named = _named_files(first)
        self._signature = self._sign()

    def _sign(self) -> tuple[Stamp, ...]:
        return tuple(_stamp(p) for p in [self.path, *self._named])

    def check(self) -> bool:
        """Read the file again if it or a file it names changed; True when a new config was applied."""
        signature = self._sign()
        if signature == self._signature:
            return False
        self._signature = signature
        try:
            web, context = self._load()
            self.server.reconfigure(tls=context, users=web.users, headers=web.headers, keep_tls=self.tls_from_options)
        except Exception as exc:  # UsageError from the checks, ValueError from reconfigure, anything else
            self.refused += 1
            self.say(f"gpudash: warning: {self._problem(exc)}; still serving with the web config read before")
            return False
        self._named = _named_files(web)
        self._signature = self._sign()  # now with the files the new config names
        self.reloads += 1
        users = len(web.users)
        self.say(
            f"gpudash: read {self.option} {self.path} again: {'TLS' if web.tls else 'no TLS'}"
            + (" (--tls-cert's)" if self.tls_from_options else "")
            + f", basic auth for {users} user{'s' if users != 1 else ''}"
        )
        return True

    def _load(self):
        from gpudash.errors import UsageError
        from gpudash.exporter.server.tls import server_context
        from gpudash.exporter.server.web_config import load_web_config

        web = load_web_config(self.path, self.option)
        if self.tls_from_options:
            if web.tls is not None:
                raise UsageError(
                    f"{self.option} {self.path}: its tls_server_config and --tls-cert/--tls-key both set TLS; give one"
                )
            return web, None  # the options' certificate stays (keep_tls): TLSFilesWatch swaps it
        return web, server_context(web.tls) if web.tls is not None else None

    def _problem(self, exc: Exception) -> str:
        from gpudash.errors import GpudashError

        if isinstance(exc, GpudashError):  # already one line naming the option and the file
            return str(exc)
        said = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        return f"{self.option} {self.path}: {said}"


class TLSFilesWatch(_Watch):
    """Loads --tls-cert/--tls-key again when either file changes, and gives `server` the new context."""

    name = "gpudash serve TLS files"

    def __init__(
        self,
        server,
        cert: str,
        key: str,
        *,
        every_s: float = CHECK_EVERY_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(every_s, say)
        self.server = server
        self.cert, self.key = cert, key
        self.what = f"--tls-cert {cert} and --tls-key {key}"
        self._signature = self._sign()

    def _sign(self) -> tuple[Stamp, ...]:
        return (_stamp(self.cert), _stamp(self.key))

    def check(self) -> bool:
        """Load the pair again if either file changed; True when the new certificate was put in force."""
        signature = self._sign()
        if signature == self._signature:
            return False
        self._signature = signature  # before loading: a write during the load is another change, seen next time
        try:
            context = pair_context(self.cert, self.key)
            self.server.replace_tls(context)
        except Exception as exc:  # UsageError naming the file, ValueError from replace_tls, anything else
            from gpudash.errors import GpudashError

            self.refused += 1
            said = str(exc) if isinstance(exc, GpudashError | ValueError) else f"{type(exc).__name__}: {exc}"
            self.say(f"gpudash: warning: {said}; still serving with the certificate read before")
            return False
        self.reloads += 1
        self.say(f"gpudash: read {self.what} again: new connections get the new certificate")
        return True


def _digest(path: str) -> str:
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read(1 << 20)).hexdigest()
    except OSError as exc:
        return type(exc).__name__


_CERT_END = b"-----END CERTIFICATE-----"
_KEY_END = b"PRIVATE KEY-----"


def pair_context(cert: str, key: str):
    """The server context for --tls-cert/--tls-key; a pair that cannot be used raises UsageError, one line
    naming the file at fault where one can be told: unreadable, no whole PEM block in it (a file still being
    written), or a key that is not the certificate's."""
    from gpudash.errors import UsageError
    from gpudash.exporter.server.tls import server_context
    from gpudash.exporter.server.web_config import TLSSettings

    try:
        return server_context(TLSSettings(cert, key))
    except UsageError as exc:
        said = str(exc).split(": ", 1)[-1]  # after server_context's "--tls-cert/--tls-key: "
    for path, option, end, what in (
        (cert, "--tls-cert", _CERT_END, "certificate"),
        (key, "--tls-key", _KEY_END, "private key"),
    ):
        try:
            with open(path, "rb") as f:
                data = f.read(1 << 20)
        except OSError as exc:
            raise UsageError(f"{option} {path}: cannot read it: {exc.strerror or exc}") from None
        if b"-----BEGIN " not in data or not data.rstrip().endswith(end):
            raise UsageError(f"{option} {path}: no whole PEM {what} in it (empty, or still being written)")
    if "KEY_VALUES_MISMATCH" in said:
        raise UsageError(f"--tls-key {key}: not the private key of the certificate in --tls-cert {cert}")
    raise UsageError(f"--tls-cert {cert} and --tls-key {key}: {said}")
