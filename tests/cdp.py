"""Headless Chromium from Debian, driven through the Chrome DevTools Protocol over aiohttp's websocket client.

Just what the browser tests need: start a browser with a fresh profile, open a page, evaluate JavaScript,
type a key, take a screenshot, quit. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

# No network here (and nothing to fetch): no QUIC, no background requests, no component updates or sync.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",  # any free port, written to DevToolsActivePort in the profile
]


def find_chromium() -> str | None:
    for name in ("chromium-headless-shell", "chromium"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Chromium:
    """One browser process group with its own empty profile in `profile`."""

    def __init__(self, binary: str, profile: Path, size: tuple[int, int] = (1400, 900)) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.profile = profile
        # Debian's /usr/bin/chromium* are shell scripts around the real binary: a new session makes the
        # script, the browser and all its helpers one process group, ended together.
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.port = self._devtools_port(timeout=20)

    def _devtools_port(self, timeout: float) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CDPError(f"chromium exited with code {self.process.returncode} before DevTools was up")
            lines = marker.read_text().split() if marker.exists() else []
            if len(lines) >= 2:
                return int(lines[0])
            time.sleep(0.05)
        self.quit()
        raise CDPError(f"chromium: no DevTools port within {timeout} s")

    def quit(self) -> None:
        """SIGTERM to the whole group (Chromium closes its connections and exits), SIGKILL after 5 s."""
        if self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    async def page(self, http: aiohttp.ClientSession) -> Page:
        """The tab the browser opened with."""
        async with http.get(f"http://127.0.0.1:{self.port}/json/list") as response:
            targets = await response.json()
        return await self._attach(http, next(t for t in targets if t["type"] == "page"))

    async def new_tab(self, http: aiohttp.ClientSession) -> Page:
        async with http.put(f"http://127.0.0.1:{self.port}/json/new?about:blank") as response:
            return await self._attach(http, await response.json())

    async def close_tab(self, http: aiohttp.ClientSession, page: Page) -> None:
        await page.socket.close()
        async with http.get(f"http://127.0.0.1:{self.port}/json/close/{page.target_id}") as response:
            if response.status != 200:
                raise CDPError(f"closing tab {page.target_id}: HTTP {response.status}")

    async def _attach(self, http: aiohttp.ClientSession, target: dict) -> Page:
        socket = await http.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0)
        return Page(socket, target["id"])


class Page:
    def __init__(self, socket: aiohttp.ClientWebSocketResponse, target_id: str) -> None:
        self.socket = socket
        self.target_id = target_id
        self._ids = itertools.count(1)

    async def call(self, method: str, timeout: float = 10, **params: Any) -> dict:
        """Send one command and wait (at most `timeout` s) for its answer."""
        number = next(self._ids)
        await self.socket.send_json({"id": number, "method": method, "params": params})
        return await asyncio.wait_for(self._reply(method, number), timeout)

    async def _reply(self, method: str, number: int) -> dict:
        while True:  # events that arrive meanwhile are not needed here
            message = await self.socket.receive()
            if message.type != aiohttp.WSMsgType.TEXT:
                raise CDPError(f"{method}: the DevTools connection closed ({message.type.name})")
            reply = json.loads(message.data)
            if reply.get("id") == number:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error'].get('message')}")
                return reply["result"]

    async def evaluate(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CDPError(f"{expression[:60]}...: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def navigate(self, url: str, timeout: float = 15) -> None:
        await self.call("Page.navigate", url=url)
        await self.wait_until(f"location.href === {json.dumps(url)} && document.readyState !== 'loading'", timeout)

    async def wait_until(self, expression: str, timeout: float) -> Any:
        """Evaluate `expression` every 0.1 s until it is truthy; CDPError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = await self.evaluate(expression)
            except CDPError as exc:  # e.g. the page is between two documents
                last = exc
            else:
                if last:
                    return last
            await asyncio.sleep(0.1)
        raise CDPError(f"not true within {timeout} s: {expression[:80]} (last: {str(last)[:200]})")

    async def find_object(self, predicate: str) -> str | None:
        """The id of the first object on the page for which `predicate` (a JS function) is true, or None.

        For state a page keeps only in closures, like the terminal that textual-serve's script creates.
        """
        prototype = await self.call("Runtime.evaluate", expression="Object.prototype")
        objects = await self.call("Runtime.queryObjects", prototypeObjectId=prototype["result"]["objectId"])
        array_id = objects["objects"]["objectId"]
        try:
            found = await self.call(
                "Runtime.callFunctionOn",
                objectId=array_id,
                functionDeclaration=f"function () {{ const test = {predicate}; "
                "return this.find(o => { try { return test(o); } catch (e) { return false; } }); }",
            )
        finally:
            await self.call("Runtime.releaseObject", objectId=array_id)
        return found["result"].get("objectId")

    async def call_on(self, object_id: str, function: str) -> Any:
        """Call `function` (JS) with `this` bound to the object; its result by value."""
        result = await self.call(
            "Runtime.callFunctionOn", objectId=object_id, functionDeclaration=function, returnByValue=True
        )
        return result["result"].get("value")

    async def press(self, key: str) -> None:
        """Type one printable key, as a keyboard would (keydown with its text, then keyup)."""
        code = f"Key{key.upper()}" if key.isalpha() else ""
        vk = ord(key.upper())
        await self.call(
            "Input.dispatchKeyEvent", type="keyDown", key=key, code=code, text=key, windowsVirtualKeyCode=vk
        )
        await self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=vk)

    async def screenshot(self) -> bytes:
        import base64

        return base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])
