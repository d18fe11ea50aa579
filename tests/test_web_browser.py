"""`gpudash web` in a real browser: Debian's headless Chromium, driven over the DevTools protocol.

The server is started as a user would (`gpudash web --replay ...` on 127.0.0.1); the checks are what a user
sees: the dashboard's device cards on the page, a tab switched by a key, a screenshot, a foreign page
refused, the session limit, and no gpudash process left once the browser is gone.
"""

from __future__ import annotations

import asyncio
import os
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import pytest
from cdp import Chromium, find_chromium
from web_helpers import DGX, SCREEN, WebServer, free_port, open_dashboard, wait_for

CHROMIUM = find_chromium()
if CHROMIUM is None and os.environ.get("CI"):
    raise RuntimeError("CI must have Debian's chromium-headless-shell (.ci/run installs it)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium-headless-shell or chromium")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_dashboard_in_a_browser_tab_switches_view_and_each_tabs_process_ends(tmp_path):
    with WebServer("--replay", str(DGX)) as server:
        browser = Chromium(CHROMIUM, tmp_path / "profile", size=(1400, 900))
        try:

            async def drive() -> None:
                async with aiohttp.ClientSession() as http:
                    page = await open_dashboard(browser, server.url, http)
                    screen = await page.wait_until(f"{SCREEN}.includes('H100') && {SCREEN}", timeout=30)
                    assert "H100 80GB HBM3" in screen and "MEMORY" in screen  # the dense device table
                    assert "replayed" in screen
                    # One session, running the TUI with the server's --replay passed on.
                    [session] = server.sessions()
                    assert session.cmdline()[-3:] == ["gpudash", "tui", f"--replay={DGX}"]

                    await page.evaluate("window.gpudashTerminal.focus()")
                    await page.press("v")  # the Precision view
                    screen = await page.wait_until(f"{SCREEN}.includes('Re-run probe') && {SCREEN}", timeout=15)
                    assert "MEMORY" not in screen  # the dashboard's device table is gone

                    shot = await page.screenshot()
                    (tmp_path / "precision-view.png").write_bytes(shot)
                    assert png_size(shot) == (1400, 900)
                    assert len(shot) > 30_000  # a blank or one-colour page compresses to a few kB

                    # The tab closes, the browser stays: the tab's process ends.
                    await browser.close_tab(http, page)
                    assert await asyncio.to_thread(wait_for, lambda: not server.sessions(), 10), server.sessions()
                    # A new tab gets a new session; the browser then quits with it open.
                    page = await open_dashboard(browser, server.url, http, new_tab=True)
                    await page.wait_until(f"{SCREEN}.includes('H100')", timeout=30)
                    assert len(server.sessions()) == 1

            asyncio.run(drive())
        finally:
            browser.quit()
        assert wait_for(lambda: not server.sessions(), timeout=10), server.sessions()
        out, err = server.stop()
    assert "session 1 closed" in err and "session 2 closed" in err
    assert "serving the dashboard on " + server.origin in out


class _EmptyPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another site</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_page_from_another_origin_cannot_open_a_session(tmp_path):
    """Cross-site websocket hijacking, tried by a real browser: a page served from another origin (another
    port of 127.0.0.1) opens a websocket to gpudash web. It must be refused and start no process."""
    other = ThreadingHTTPServer(("127.0.0.1", free_port()), _EmptyPage)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    with WebServer("--replay", str(DGX)) as server:
        browser = Chromium(CHROMIUM, tmp_path / "profile")
        try:

            async def attack() -> str:
                async with aiohttp.ClientSession() as http:
                    page = await browser.page(http)
                    await page.navigate(f"http://127.0.0.1:{other.server_address[1]}/")
                    result = await page.call(
                        "Runtime.evaluate",
                        expression=f"""new Promise(done => {{
                            const ws = new WebSocket("ws://127.0.0.1:{server.port}/ws?width=80&height=24");
                            ws.onopen = () => done("open");
                            ws.onclose = e => done("closed " + e.code);
                        }})""",
                        awaitPromise=True,
                        returnByValue=True,
                    )
                    return result["result"]["value"]

            assert asyncio.run(attack()) == "closed 1006"  # the handshake failed
        finally:
            browser.quit()
            other.shutdown()
            other.server_close()
        assert server.sessions() == []
        _, err = server.stop()
    assert f"refused a session: Origin http://127.0.0.1:{other.server_address[1]} is not this server" in err
    assert "opened" not in err


def test_the_terminal_has_the_keyboard_as_soon_as_the_page_loads(tmp_path):
    """No click and no focus() from the test: the first key typed after the page loaded reaches the dashboard
    (textual-serve's page alone left the focus on the document, so keys were ignored until a click)."""
    with WebServer("--replay", str(DGX)) as server:
        browser = Chromium(CHROMIUM, tmp_path / "profile", size=(1400, 900))
        try:

            async def drive() -> None:
                async with aiohttp.ClientSession() as http:
                    page = await open_dashboard(browser, server.url, http)
                    await page.wait_until(f"{SCREEN}.includes('H100')", timeout=30)
                    focused = (
                        "document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')"
                    )
                    assert await page.wait_until(focused, timeout=10)
                    await page.press("v")  # the Precision view, typed as a keyboard would
                    screen = await page.wait_until(f"{SCREEN}.includes('Re-run probe') && {SCREEN}", timeout=15)
                    assert "MEMORY" not in screen

            asyncio.run(drive())
        finally:
            browser.quit()
        assert wait_for(lambda: not server.sessions(), timeout=10), server.sessions()
        server.stop()
