"""What `gpudash web` costs to start, and how soon a browser session shows the dashboard.

    python benchmarks/web_startup.py [--runs 5]

Measures, each in a fresh process, on 127.0.0.1 only:

- `gpudash web --help` and, for comparison, `gpudash --help` wall time (median of 7 runs). The web
  command's parser imports neither the server (aiohttp, textual-serve) nor Textual.
- Server ready: from spawning `gpudash web --replay dgx-h100-8gpu.json` to its page answering HTTP 200.
- Session first frame: from opening a session's websocket (as the page's script does, 140x45) to the first
  device card title ("GPU 0") in the terminal output it receives. This is a whole `gpudash tui` process
  starting under textual-serve: interpreter, imports, replayed discovery, first paint.
- Memory (RSS, psutil): the server process once ready, and one session's process after its first frame.

No user config is read (XDG_CONFIG_HOME points at an empty directory).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import psutil

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUDASH_")}
    env.update(XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="gpudash-bench-"), PYTHONPATH=str(ROOT))
    return env


def wall(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpudash", *args], stdout=subprocess.DEVNULL, env=clean_env(), check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


async def first_frame(origin: str, server: psutil.Process) -> tuple[float, int]:
    """Seconds from opening a session to its first device card, and the session process's RSS then."""
    async with aiohttp.ClientSession() as http:
        start = time.perf_counter()
        ws = await http.ws_connect(f"{origin}/ws?width=140&height=45", headers={"Origin": origin})
        received = b""
        while b"GPU 0" not in received:
            message = await asyncio.wait_for(ws.receive(), 30)
            if message.type == aiohttp.WSMsgType.BINARY:
                received += message.data
            elif message.type != aiohttp.WSMsgType.TEXT:
                raise SystemExit(f"session ended ({message.type.name}) before its first frame")
        seconds = time.perf_counter() - start
        [app] = server.children()
        rss = app.memory_info().rss
        await ws.close()
        return seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs

    web_help = wall(["web", "--help"], 7)
    plain_help = wall(["--help"], 7)

    ready, frames, server_rss, session_rss = [], [], [], []
    for _ in range(runs):
        port = free_port()
        url, origin = f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}"
        start = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "-m", "gpudash", "web", "--listen", f"127.0.0.1:{port}", "--replay", str(DGX)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=clean_env(),
        )
        try:
            while not answers(url):
                if server.poll() is not None or time.perf_counter() - start > 30:
                    raise SystemExit("gpudash web did not start")
                time.sleep(0.01)
            ready.append(time.perf_counter() - start)
            me = psutil.Process(server.pid)
            server_rss.append(me.memory_info().rss)

            seconds, rss = asyncio.run(first_frame(origin, me))
            frames.append(seconds)
            session_rss.append(rss)
        finally:
            server.terminate()
            server.wait(15)

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"gpudash web start-up: {platform.machine()}, {os.cpu_count()} logical CPUs, Python "
        f"{platform.python_version()}, load average {load} at the end; median of {runs} runs (7 for --help)"
    )
    mib = 1024 * 1024
    rows = [
        ("gpudash web --help (wall)", f"{web_help:.3f} s"),
        ("gpudash --help (wall)", f"{plain_help:.3f} s"),
        ("server answering HTTP, --replay dgx-h100-8gpu", f"{statistics.median(ready):.3f} s"),
        ("session: websocket open -> first device card", f"{statistics.median(frames):.3f} s"),
        ("server RSS when ready", f"{statistics.median(server_rss) / mib:.0f} MiB"),
        ("one session's process RSS after first frame", f"{statistics.median(session_rss) / mib:.0f} MiB"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  result")
    for name, value in rows:
        print(f"{name:<{width}}  {value:>8}")


if __name__ == "__main__":
    main()
