"""`gpudash web` without a browser: the --listen address, the Origin and host checks, the options each
session gets, bad input, start-up imports, and the session processes that outlive their browser."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import socket
import subprocess
import sys
import textwrap
import time

import aiohttp
import psutil
import pytest
from aiohttp.test_utils import TestServer
from web_helpers import REPO, free_port

from gpudash.cli import _global_options, build_parser
from gpudash.errors import UsageError
from gpudash.web.address import DEFAULT_PORT, Listen, check_listen, is_loopback, parse_listen
from gpudash.web.command import options_as_argv, session_command
from gpudash.web.origin import loopback_name, same_origin


@pytest.mark.parametrize(
    "text, expected",
    [
        (None, Listen("127.0.0.1", DEFAULT_PORT)),
        ("127.0.0.1:9000", Listen("127.0.0.1", 9000)),
        ("localhost", Listen("localhost", DEFAULT_PORT)),
        (":9000", Listen("127.0.0.1", 9000)),
        ("[::1]:9000", Listen("::1", 9000)),
        ("[::1]", Listen("::1", DEFAULT_PORT)),
    ],
)
def test_listen_addresses(text, expected):
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:http", "::1:9000", "[::1:9000"])
def test_bad_listen_addresses_name_the_argument(text):
    with pytest.raises(UsageError, match=r"^--listen "):
        parse_listen(text)


def test_only_loopback_is_served_without_allow_remote():
    assert is_loopback("127.0.0.1") and is_loopback("127.3.2.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("192.0.2.7")
    assert check_listen(Listen("127.0.0.1", 1), allow_remote=False) is False
    with pytest.raises(UsageError, match="--allow-remote"):
        check_listen(Listen("0.0.0.0", 1), allow_remote=False)
    assert check_listen(Listen("0.0.0.0", 1), allow_remote=True) is True


@pytest.mark.parametrize(
    "origin, host, same",
    [
        ("http://127.0.0.1:8642", "127.0.0.1:8642", True),
        ("http://LocalHost:8642", "localhost:8642", True),
        ("http://[::1]:8642", "[::1]:8642", True),
        ("https://dash.example.org", "dash.example.org", True),  # behind a TLS proxy that passes Host on
        ("https://dash.example.org", "dash.example.org:443", True),
        ("http://127.0.0.1:8643", "127.0.0.1:8642", False),  # another port is another origin
        ("http://evil.example", "127.0.0.1:8642", False),
        ("http://127.0.0.1.evil.example:8642", "127.0.0.1:8642", False),
        ("null", "127.0.0.1:8642", False),
        (None, "127.0.0.1:8642", False),
        ("file://", "127.0.0.1:8642", False),
        ("http://127.0.0.1:8642", None, False),
        ("http://127.0.0.1:99999", "127.0.0.1:99999", False),
    ],
)
def test_origin_must_be_the_served_host(origin, host, same):
    assert same_origin(origin, host) is same


@pytest.mark.parametrize(
    "host, ok",
    [("127.0.0.1:8642", True), ("localhost:8642", True), ("[::1]:8642", True), ("app.localhost", True),
     ("evil.example:8642", False), ("192.168.1.5:8642", False), ("", False), (None, False)],
)  # fmt: skip
def test_loopback_server_answers_loopback_names_only(host, ok):
    assert loopback_name(host) is ok


def test_sessions_get_the_global_options_the_server_got(tmp_path):
    args = build_parser().parse_args(
        ["--replay", "m.json", "web", "--plugins-dir", "a", "--plugins-dir", "-odd dir", "--config", "c.toml",
         "--readonly"]
    )  # fmt: skip
    words = options_as_argv(args, _global_options(suppress=False))
    assert words == [
        "--replay=m.json", "--config=c.toml", "--plugins-dir=a", "--plugins-dir=-odd dir", "--readonly"
    ]  # fmt: skip
    # They mean the same to `gpudash tui`, and survive the shell textual-serve runs the command with.
    again = build_parser().parse_args(["tui", *shlex.split(shlex.join(words))])
    assert (again.replay, again.config, again.plugins_dir) == ("m.json", "c.toml", ["a", "-odd dir"])
    assert again.readonly  # every browser tab's dashboard signals nothing either
    assert shlex.split(session_command(words, server_pid=42)) == [
        "exec", sys.executable, "-m", "gpudash.web.session", "42", *words
    ]  # fmt: skip


def test_any_global_option_is_passed_on_not_just_the_known_ones():
    """A global option added later (say, a fleet's --hosts or a flag) reaches the sessions unchanged."""
    import argparse

    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--replay")
    parent.add_argument("--hosts", nargs="+")
    parent.add_argument("--prometheus")
    parent.add_argument("--fleet-only", action="store_true")
    args = parent.parse_args(["--hosts", "a:9100", "b:9100", "--fleet-only"])
    words = options_as_argv(args, parent)
    assert words == ["--hosts", "a:9100", "b:9100", "--fleet-only"]
    assert parent.parse_args(words) == args


def run_gpudash(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize(
    "args, code, line",
    [
        (["web", "--listen", "0.0.0.0:8642"], 2, "gpudash: error: --listen 0.0.0.0:8642: not a loopback address"),
        (["web", "--listen", "127.0.0.1:0"], 2, "gpudash: error: --listen 127.0.0.1:0: the port must be"),
        (["web", "--max-sessions", "0"], 2, "gpudash: error: --max-sessions: expected a value from 1 to 64, got 0"),
        (["web", "--replay", "missing.json"], 2, "gpudash: error: missing.json: snapshot file not found"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(args, code, line):
    result = run_gpudash(*args)
    assert result.returncode == code
    assert result.stderr.startswith(line) and result.stderr.count("\n") == 1, result.stderr


def test_config_key_for_the_session_limit_is_checked(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[web]\nmax_sessions = 500\n")
    result = run_gpudash("web", "--config", str(config))
    assert result.returncode == 2
    assert (
        result.stderr
        == f"gpudash: error: {config}: web.max_sessions: expected a value from 1 to 64, got 500 (line 2)\n"
    )


def test_a_busy_port_is_one_line():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_gpudash("web", "--listen", f"127.0.0.1:{port}")
    assert result.returncode == 3  # could not do its job
    assert result.stderr.startswith(f"gpudash: error: --listen 127.0.0.1:{port}: Address already in use")
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_allow_remote_warns_in_one_line_that_there_is_no_authentication():
    # 192.0.2.7 (TEST-NET-1) is no address of this machine: binding fails here, after the warning; no
    # packet leaves the machine.
    result = run_gpudash("web", "--listen", "192.0.2.7:8642", "--allow-remote")
    warning, error = result.stderr.splitlines()
    assert warning.startswith("gpudash: warning: serving 192.0.2.7:8642 to other machines with no authentication")
    assert "docs/web.md" in warning
    assert error.startswith("gpudash: error: --listen 192.0.2.7:8642: ")
    assert result.returncode == 3  # could not do its job


def loaded_after(code: str) -> list[str]:
    watch = ("textual", "textual_serve", "aiohttp", "torch")
    script = (
        textwrap.dedent(code) + f"\nimport json, sys\nprint(json.dumps([m for m in {watch!r} if m in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_web_help_imports_no_server_and_no_textual():
    code = """
        import contextlib, io
        import gpudash.cli
        with contextlib.redirect_stdout(io.StringIO()) as out:
            try:
                gpudash.cli.main(["web", "--help"])
            except SystemExit as exc:
                assert exc.code == 0
        assert "--max-sessions" in out.getvalue()
    """
    assert loaded_after(code) == []


def test_the_server_process_never_imports_textual():
    """Only each session's own process runs (and imports) Textual."""
    assert loaded_after("import gpudash.cli.web_cmd, gpudash.web.server, gpudash.web.session") == [
        "textual_serve",
        "aiohttp",
    ]


# A session's app that never answers textual-serve's "quit" (still starting, or stuck), and that has
# started a process of its own: what the server must still clean up.
STUCK_APP = f"exec {shlex.quote(sys.executable)} -c " + shlex.quote(
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
)


async def start_server(command: str, **options):
    from gpudash.web.server import GpudashServer

    port = free_port()
    server = GpudashServer(command, Listen("127.0.0.1", port), **options)
    test_server = TestServer(await server.build_app(), host="127.0.0.1", port=port)
    await test_server.start_server()
    return server, test_server


@contextlib.asynccontextmanager
async def connect(test_server: TestServer):
    """A browser's websocket to the server, from the server's own origin."""
    origin = f"http://127.0.0.1:{test_server.port}"
    async with aiohttp.ClientSession() as http, http.ws_connect(f"{origin}/ws", headers={"Origin": origin}) as ws:
        yield ws


async def session_processes(server, count: int = 2, timeout: float = 10) -> list[psutil.Process]:
    """The app process and what it started, once both run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = [s for s in server.sessions._live if s.process is not None]
        if live:
            me = psutil.Process(live[0].process.pid)
            tree = [me, *me.children(recursive=True)]
            if len(tree) >= count:
                return tree
        await asyncio.sleep(0.05)
    raise AssertionError("the session's processes did not start")


async def test_a_stuck_session_app_is_ended_after_its_browser_leaves():
    server, test_server = await start_server(STUCK_APP, max_sessions=1, quit_grace_s=0.5)
    try:
        async with connect(test_server) as ws:
            processes = await session_processes(server)
            await ws.close()
        gone, alive = await asyncio.to_thread(psutil.wait_procs, processes, 8)
        assert alive == [] and len(gone) == 2
        for _ in range(50):  # the slot is free once they are gone
            if len(server.sessions) == 0:
                break
            await asyncio.sleep(0.05)
        assert len(server.sessions) == 0
    finally:
        await test_server.close()


async def test_stopping_the_server_ends_sessions_still_open():
    server, test_server = await start_server(STUCK_APP, max_sessions=2, quit_grace_s=0.5)
    async with connect(test_server) as ws:
        processes = await session_processes(server)
        await test_server.close()  # runs the app's shutdown, as Ctrl+C does
        assert ws.closed or (await ws.receive()).data == 1001
    _, alive = await asyncio.to_thread(psutil.wait_procs, processes, 8)
    assert alive == []
