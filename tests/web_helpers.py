"""`gpudash web` as a user starts it: a real server process on 127.0.0.1, and ways to look at its sessions."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import psutil
from cdp import Chromium, Page

REPO = Path(__file__).resolve().parent.parent
DGX = REPO / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout: float, step: float = 0.1):
    """Poll `condition()` until it is truthy (returned) or `timeout` s pass (returns the last falsy value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


class WebServer:
    """`python -m gpudash web --listen 127.0.0.1:<free port> ARGS`, up and answering, until stop()."""

    def __init__(self, *args: str, timeout: float = 20) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.origin = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gpudash", "web", "--listen", f"127.0.0.1:{self.port}", *args],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if not wait_for(self._answers, timeout):
            out, err = self.stop()
            raise AssertionError(f"gpudash web did not answer within {timeout} s\n{out}\n{err}")

    def _answers(self) -> bool:
        if self.process.poll() is not None:
            return True  # let the caller see the exit
        try:
            with urllib.request.urlopen(self.url, timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def sessions(self) -> list[psutil.Process]:
        """Every process the server has started and that still runs (children of children too)."""
        try:
            return [p for p in psutil.Process(self.process.pid).children(recursive=True) if p.is_running()]
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> tuple[str, str]:
        """Ctrl+C's signal's twin (SIGTERM); its stdout and stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.communicate()

    def __enter__(self) -> WebServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


async def read_screen_until(ws: aiohttp.ClientWebSocketResponse, text: bytes, timeout: float) -> bytes:
    """Read a session's terminal output until `text` shows up in it."""
    received = b""

    async def read() -> bytes:
        nonlocal received
        while text not in received:
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:
                received += message.data
            elif message.type != aiohttp.WSMsgType.TEXT:
                raise AssertionError(f"the session ended ({message.type.name}) before {text!r} appeared")
        return received

    return await asyncio.wait_for(read(), timeout)


# textual-serve's page keeps its xterm.js terminal in a closure and draws it on a canvas: find the object
# that holds it, then read the terminal's screen buffer, row by row, as the user sees it.
IS_SESSION = "o => 'websocket_url' in o && o.terminal && o.terminal.buffer"
SCREEN = """(() => {
  const t = window.gpudashTerminal, b = t.buffer.active, rows = [];
  for (let i = 0; i < t.rows; i++) { const line = b.getLine(b.viewportY + i); rows.push(line ? line.translateToString(true) : ''); }
  return rows.join('\\n');
})()"""


async def open_dashboard(browser: Chromium, url: str, http: aiohttp.ClientSession, new_tab: bool = False) -> Page:
    """Open `url` (a gpudash web page) and make its terminal readable as window.gpudashTerminal."""
    page = await (browser.new_tab(http) if new_tab else browser.page(http))
    await page.navigate(url)
    for _ in range(100):  # the terminal exists once the page's script ran (window.onload)
        found = await page.find_object(IS_SESSION)
        if found:
            break
        await asyncio.sleep(0.2)
    else:
        raise AssertionError("textual-serve's terminal never appeared on the page")
    await page.call_on(found, "function () { window.gpudashTerminal = this.terminal; }")
    return page
