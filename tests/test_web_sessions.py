"""`gpudash web` sessions against a real server process: who may connect, how many at once, and that every
session's gpudash process ends with its browser connection or with the server."""

from __future__ import annotations

import asyncio
import signal
import urllib.error
import urllib.request

import aiohttp
import psutil
import pytest
from web_helpers import DGX, WebServer, read_screen_until, wait_for


def ws_url(server: WebServer) -> str:
    return f"{server.origin}/ws?width=120&height=40"


async def handshake_status(server: WebServer, headers: dict[str, str]) -> int:
    async with aiohttp.ClientSession() as http:
        try:
            async with http.ws_connect(ws_url(server), headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_foreign_or_missing_origin_and_foreign_host_names_are_refused():
    with WebServer("--replay", str(DGX)) as server:
        assert asyncio.run(handshake_status(server, {"Origin": "http://evil.example"})) == 403
        assert asyncio.run(handshake_status(server, {"Origin": f"http://evil.example:{server.port}"})) == 403
        assert asyncio.run(handshake_status(server, {})) == 403  # a browser always sends one
        assert asyncio.run(handshake_status(server, {"Origin": "null"})) == 403
        # DNS rebinding: evil.example re-pointed at 127.0.0.1; Origin and Host agree, the name is not ours.
        rebound = {"Origin": f"http://evil.example:{server.port}", "Host": f"evil.example:{server.port}"}
        assert asyncio.run(handshake_status(server, rebound)) == 403
        request = urllib.request.Request(server.url, headers={"Host": f"evil.example:{server.port}"})
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(request, timeout=5)
        assert page.value.code == 403
        assert server.sessions() == []  # nothing was started for any of them
        # localhost is the same server under another loopback name: its page and session work.
        same = {"Origin": f"http://localhost:{server.port}", "Host": f"localhost:{server.port}"}
        assert asyncio.run(handshake_status(server, same)) == 101
        assert wait_for(lambda: not server.sessions(), timeout=10)
        _, err = server.stop()
    assert err.count("refused a session: Origin") == 4
    assert "refused a request for host 'evil.example" in err


def test_the_session_limit_holds_and_frees_when_a_tab_closes():
    with WebServer("--replay", str(DGX), "--max-sessions", "1") as server:

        async def scenario() -> None:
            headers = {"Origin": server.origin}
            async with aiohttp.ClientSession() as http:
                first = await http.ws_connect(ws_url(server), headers=headers)
                await read_screen_until(first, b"H100", timeout=20)
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(ws_url(server), headers=headers)
                assert refused.value.status == 503
                async with http.get(server.url) as page:  # the page says why, instead of a dead terminal
                    assert page.status == 503
                    assert "all 1 sessions are in use" in await page.text()
                assert len(server.sessions()) == 1
                await first.close()  # the tab closes: its slot is free once its process is gone
                second = await http.ws_connect(ws_url(server), headers=headers)
                await read_screen_until(second, b"H100", timeout=20)
                await second.close()

        asyncio.run(scenario())
        assert wait_for(lambda: not server.sessions(), timeout=10)
        _, err = server.stop()
    assert "refused a session: all 1 are in use" in err


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["server-stopped", "server-killed"])
def test_sessions_end_with_the_server(how):
    """Ctrl+C/SIGTERM closes every browser's session; even a killed server leaves no dashboard behind."""
    with WebServer("--replay", str(DGX)) as server:

        async def open_session_then_stop_server() -> list[psutil.Process]:
            async with aiohttp.ClientSession() as http:
                ws = await http.ws_connect(ws_url(server), headers={"Origin": server.origin})
                await read_screen_until(ws, b"H100", timeout=20)
                sessions = server.sessions()
                server.process.send_signal(how)
                if how == signal.SIGTERM:  # the browser is told, with "going away" (after the frames in flight)
                    message = await asyncio.wait_for(ws.receive(), 10)
                    while message.type == aiohttp.WSMsgType.BINARY:
                        message = await asyncio.wait_for(ws.receive(), 10)
                    assert message.type == aiohttp.WSMsgType.CLOSE and message.data == 1001
                return sessions

        sessions = asyncio.run(open_session_then_stop_server())
        assert len(sessions) == 1
        assert server.process.wait(timeout=15) == (0 if how == signal.SIGTERM else -signal.SIGKILL)
        _, still_running = psutil.wait_procs(sessions, timeout=10)
        assert still_running == []
