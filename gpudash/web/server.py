"""textual-serve's Server, with what `gpudash web` adds: an Origin check, loopback names only on a loopback
server, a session limit, and an end to every session's process.

textual-serve's own code runs as it is; this subclass overrides its methods (`handle_index`,
`handle_websocket`, `on_startup`, `on_shutdown`, and the private `_make_app` and `_process_messages`) and
reads its AppService's private `_process`. Those private names are why the dependency is pinned to
textual-serve 1.1; tests/test_web*.py run the real server, so a change there fails them.
"""

from __future__ import annotations

import contextvars
import logging
import socket
import sys

from aiohttp import web
from textual_serve.server import Server

from gpudash.errors import GpudashError
from gpudash.web.address import Listen
from gpudash.web.origin import loopback_name, same_origin
from gpudash.web.page import with_focus
from gpudash.web.sessions import QUIT_GRACE_S, SLOT_WAIT_S, Session, Sessions

log = logging.getLogger("gpudash.web")

# The session whose websocket the running handler serves: textual-serve calls _process_messages from inside
# handle_websocket, in the same task, without passing the request on.
_SESSION: contextvars.ContextVar[Session] = contextvars.ContextVar("gpudash_web_session")


class GpudashServer(Server):
    def __init__(
        self,
        command: str,
        listen: Listen,
        *,
        max_sessions: int,
        allow_remote: bool = False,
        slot_wait_s: float = SLOT_WAIT_S,
        quit_grace_s: float = QUIT_GRACE_S,
    ) -> None:
        super().__init__(command, host=listen.host, port=listen.port, title="gpudash")
        self.listen = listen
        self.allow_remote = allow_remote
        self.sessions = Sessions(max_sessions, slot_wait_s=slot_wait_s, quit_grace_s=quit_grace_s)

    def initialize_logging(self) -> None:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("gpudash web: %(message)s"))
        logging.basicConfig(level=logging.INFO, handlers=[handler])
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # one line per session is enough

    async def _make_app(self) -> web.Application:  # textual-serve's serve() builds its app through this
        return await self.build_app()

    async def build_app(self) -> web.Application:
        app = await super()._make_app()
        if not self.allow_remote:
            app.middlewares.append(self._loopback_names_only)
        return app

    @web.middleware
    async def _loopback_names_only(self, request: web.Request, handler) -> web.StreamResponse:
        if not loopback_name(request.host, self.listen.host):
            log.warning("refused a request for host %r: this server answers to loopback names only", request.host)
            # Only the address it listens on: `localhost` may resolve to another loopback address than --listen's.
            return web.Response(status=403, text=f"gpudash web serves this machine only: open {self.listen.url}.\n")
        return await handler(request)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not await self.sessions.wait_for_free_slot():
            return web.Response(status=503, text=self._full_message())
        # textual-serve writes public_url into the page's links and websocket address. Give each browser
        # the address it used (localhost, an ssh tunnel, a proxy), so its websocket reaches the same host
        # and passes the Origin check. The parent's code reads it without awaiting, so no other request
        # can change it in between.
        scheme = "https" if request.headers.get("X-Forwarded-Proto", "").lower() == "https" else request.scheme
        self.public_url = f"{scheme}://{request.host}"
        response = await super().handle_index(request)
        if isinstance(response, web.Response) and response.text:  # the terminal takes the keyboard on load
            response.text = with_focus(response.text)
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        if not same_origin(origin, request.host):
            log.warning("refused a session: Origin %s is not this server (%s)", origin or "(none)", request.host)
            raise web.HTTPForbidden(text="gpudash web: a page from another origin may not open a session.\n")
        session = await self.sessions.open()
        if session is None:
            log.warning("refused a session: all %d are in use", self.sessions.limit)
            raise web.HTTPServiceUnavailable(text=self._full_message())
        token = _SESSION.set(session)
        try:
            return await super().handle_websocket(request)
        finally:
            _SESSION.reset(token)
            await self.sessions.close(session)

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service) -> None:
        session = _SESSION.get()
        self.sessions.attach(session, websocket, getattr(app_service, "_process", None))
        try:
            await super()._process_messages(websocket, app_service)
        finally:
            self.sessions.browser_left(session)

    async def on_startup(self, app: web.Application) -> None:
        print(
            f"gpudash web: serving the dashboard on {self.listen.url} "
            f"(at most {self.sessions.limit} browser session{'s' if self.sessions.limit > 1 else ''}); Ctrl+C stops",
            flush=True,
        )

    async def on_shutdown(self, app: web.Application) -> None:
        await self.sessions.shutdown()

    def _full_message(self) -> str:
        return (
            f"gpudash web: all {self.sessions.limit} sessions are in use. Close another gpudash tab, "
            "or restart gpudash web with a larger --max-sessions.\n"
        )


def serve(command: str, listen: Listen, *, max_sessions: int, allow_remote: bool) -> int:
    """Serve until Ctrl+C or SIGTERM; an address that cannot be bound is one line, exit code 3."""
    _check_bind(listen)
    server = GpudashServer(command, listen, max_sessions=max_sessions, allow_remote=allow_remote)
    try:
        server.serve()
    except OSError as exc:
        raise GpudashError(f"--listen {listen}: {exc.strerror or exc}") from None
    return 0


def _check_bind(listen: Listen) -> None:
    """Fail before printing that we serve: textual-serve binds only after its start-up hooks ran."""
    try:
        family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
        with socket.create_server((listen.host, listen.port), family=family):
            pass
    except OSError as exc:
        raise GpudashError(f"--listen {listen}: {exc.strerror or exc}") from None
