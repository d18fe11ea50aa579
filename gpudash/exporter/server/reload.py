"""The web config read again while serving, as exporter-toolkit does, so certificates and users change without a
restart.

A thread of its own (never the accepting one, never a connection's) looks at the file once a second, and at the
certificate, key and client CA files the last good config named: a change of any one's modification time, size
or inode (an editor's or a deployment's rename) reads the file again, checks it as at start (web_config.py) and
loads its certificate (tls.py). A good config replaces the server's TLS context, users and headers at once
(Server.reconfigure). A bad one, or one that would switch between HTTP and HTTPS or set TLS beside
--tls-cert/--tls-key, changes nothing: the server goes on with the last good config, and stderr gets one warning
per change of the files (not one a second).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from gpudash.exporter.server.web_config import WebConfig

CHECK_EVERY_S = 1.0

Signature = tuple[tuple[str, int, int, int] | tuple[str, str], ...]


def _stamp(path: str) -> tuple[str, int, int, int] | tuple[str, str]:
    try:
        st = os.stat(path)
    except OSError as exc:
        return (path, type(exc).__name__)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def _named_files(web: WebConfig) -> list[str]:
    if web.tls is None:
        return []
    return [f for f in (web.tls.cert_file, web.tls.key_file, web.tls.client_ca_file) if f]


class WebConfigWatch:
    """Reads `path` again when it or a file it names changes, and reconfigures `server` with what it says."""

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
        self.server = server
        self.path = path
        self.option = option
        self.tls_from_options = tls_from_options  # --tls-cert/--tls-key serve TLS: the file must not set it too
        self.every_s = every_s
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))
        self._named = _named_files(first)
        self._signature = self._sign()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0  # good configs applied
        self.refused = 0  # changes that left the last good config in force

    def _sign(self) -> Signature:
        return tuple(_stamp(p) for p in [self.path, *self._named])

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="gpudash serve web config", daemon=True)
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
                self.say(f"gpudash: warning: {self.option} {self.path}: not read again: {type(exc).__name__}: {exc}")

    def check(self) -> bool:
        """Read the file again if it or a file it names changed; True when a new config was applied."""
        signature = self._sign()
        if signature == self._signature:
            return False
        self._signature = signature
        try:
            web, context = self._load()
            self.server.reconfigure(tls=context, users=web.users, headers=web.headers)
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
            return web, self.server.tls  # the options' certificate stays
        return web, server_context(web.tls) if web.tls is not None else None

    def _problem(self, exc: Exception) -> str:
        from gpudash.errors import GpudashError

        if isinstance(exc, GpudashError):  # already one line naming the option and the file
            return str(exc)
        said = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        return f"{self.option} {self.path}: {said}"
