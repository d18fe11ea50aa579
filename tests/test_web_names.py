"""`gpudash web --listen NAME`: the server answers on every name it prints and prints only names it answers on
(issue 27 item 4: a name resolving to loopback was printed, then refused with 403)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from web_helpers import REPO, free_port

from gpudash.web.address import Listen, is_loopback
from gpudash.web.origin import loopback_name


def test_the_listen_name_is_a_name_the_server_answers_to():
    assert loopback_name("gpu-box:8642", "gpu-box") and loopback_name("GPU-Box.:8642", "gpu-box.")
    assert not loopback_name("gpu-box:8642") and not loopback_name("evil.example:8642", "gpu-box")
    assert not loopback_name("gpu-box.evil.example:8642", "gpu-box")


async def test_a_loopback_server_answers_its_listen_name_and_refuses_others():
    """The server as `gpudash web --listen gpu-box:PORT` runs it, where gpu-box resolves to 127.0.0.1; the
    Host header is what the check reads, so the requests go to 127.0.0.1 with that header."""
    from gpudash.web.server import GpudashServer

    port = free_port()
    server = GpudashServer("true", Listen("gpu-box", port), max_sessions=1)
    test_server = TestServer(await server.build_app(), host="127.0.0.1", port=port)
    await test_server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}/"
            async with http.get(url, headers={"Host": f"gpu-box:{port}"}) as answer:
                assert answer.status == 200
            async with http.get(url, headers={"Host": f"evil.example:{port}"}) as refused:
                assert refused.status == 403
                text = await refused.text()
        # the refusal names only the address it answers on
        assert re.findall(r"https?://[^\s]+", text) == [f"http://gpu-box:{port}."]
        assert "localhost" not in text
    finally:
        await test_server.close()


def loopback_hostname() -> str:
    name = socket.gethostname()
    if not name or not is_loopback(name) or name.lower() == "localhost":
        pytest.skip(f"this machine's name {name!r} does not resolve to loopback only")
    return name


def test_web_answers_on_the_url_it_prints_for_a_name_that_resolves_to_loopback():
    name, port = loopback_hostname(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gpudash", "web", "--listen", f"{name}:{port}"],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "gpudash web: serving the dashboard on URL (...)"
        printed = re.findall(r"https?://[^\s]+", line)
        assert printed == [f"http://{name}:{port}"], line
        deadline, status = time.monotonic() + 20, None
        while time.monotonic() < deadline and status is None:
            try:
                with urllib.request.urlopen(printed[0] + "/", timeout=2) as answer:
                    status = answer.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        assert status == 200
    finally:
        process.terminate()
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate(timeout=15)
