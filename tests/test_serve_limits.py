"""`gpudash serve`'s server under clients that try to stall it, on loopback: 1,000 idle sockets, headers a byte
at a time, TLS clients that never shake hands, a cap full of answers in progress; basic auth and the web config
file (exporter-toolkit's format). Each test gives its attackers deadlines far longer than the test, so the
normal scrape can only pass because the server keeps it apart from them, not because they timed out."""

from __future__ import annotations

import base64
import contextlib
import http.client
import resource
import socket
import ssl
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import bcrypt
import pytest
from servers import DGX, get, gpudash_serve, self_signed_certificate

from gpudash.cli import main
from gpudash.errors import UsageError
from gpudash.exporter.server import Limits, Server, load_web_config
from gpudash.exporter.server.tls import server_context

pytestmark = pytest.mark.light

SCRAPE_BOUND_S = 3.0  # a normal scrape takes milliseconds; this leaves room for a loaded 2-core machine
LONG = 60.0  # the attackers' deadlines: longer than any test


def hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"gpudash_up 1\n"]


@contextlib.contextmanager
def running(app=hello, tls: ssl.SSLContext | None = None, users=None, **limits) -> Iterator[Server]:
    values = {"handshake_s": LONG, "idle_s": LONG, "read_s": LONG, "write_s": LONG, **limits}
    server = Server(app, Limits(**values), tls=tls, users=users)
    server.bind("127.0.0.1", 0)
    server.start()
    try:
        yield server
    finally:
        server.close()


def scrape(server: Server, context: ssl.SSLContext | None = None, headers: dict | None = None) -> tuple[int, float]:
    """One normal scrape on a new connection: (status, seconds it took)."""
    start = time.monotonic()
    if context is None:
        conn: http.client.HTTPConnection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=SCRAPE_BOUND_S)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, timeout=SCRAPE_BOUND_S, context=context)
    try:
        conn.request("GET", "/metrics", headers=headers or {})
        response = conn.getresponse()
        response.read()
        return response.status, time.monotonic() - start
    finally:
        conn.close()


def wait_until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def closed_by_server(sock: socket.socket, timeout: float) -> bool:
    """True when the server closes `sock` within `timeout` (end of stream or a reset)."""
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@contextlib.contextmanager
def room_for_files(wanted: int, needed: int, what: str) -> Iterator[None]:
    """This process's open-files limit raised to `wanted` (as far as the hard limit lets it) while the block
    runs; a skip naming `what` where the hard limit leaves fewer than `needed`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if room < needed:
        pytest.skip(f"the hard limit on open files ({hard}) leaves no room for {what}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, room), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def many_descriptors():
    """Room for 1,000 client sockets and the server's in this one process."""
    with room_for_files(4096, 1400, "1,000 sockets"):
        yield


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def client_context(cert: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    return context


# Idle connections ------------------------------------------------------------------------------------------


def test_a_thousand_idle_sockets_do_not_delay_a_scrape(many_descriptors):
    with running(max_connections=64) as server:
        idle = []
        try:
            for _ in range(1000):
                idle.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            assert wait_until(lambda: server.connections.evicted >= 1000 - 64)
            status, took = scrape(server)
            assert status == 200 and took < SCRAPE_BOUND_S
            # the server holds no more than its cap (and those still closing), never the 1,000
            assert len(server.connections) <= 2 * 64
        finally:
            for sock in idle:
                sock.close()


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout():
    with running(idle_s=0.3) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("Connection") == "keep-alive"
        response.read()
        conn.request("GET", "/metrics")  # the same connection answers again
        assert conn.getresponse().read() == b"gpudash_up 1\n"
        sock = conn.sock
        assert sock is not None and closed_by_server(sock, timeout=5)
        conn.close()


# Slow clients ----------------------------------------------------------------------------------------------


def test_headers_a_byte_at_a_time_are_cut_off_at_the_read_deadline():
    with running(read_s=0.5) as server, socket.create_connection(("127.0.0.1", server.port), timeout=5) as slow:
        start, request = time.monotonic(), b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200
        cut = False
        for byte in request:
            try:
                slow.send(bytes([byte]))
            except OSError:  # the server closed it
                cut = True
                break
            if time.monotonic() - start > 5:
                break
            time.sleep(0.05)
        assert cut or closed_by_server(slow, timeout=3)
        assert time.monotonic() - start < 5  # the deadline is for the whole head, not each byte


def test_slow_clients_filling_the_cap_do_not_delay_a_scrape():
    cap = 8
    stop = threading.Event()
    with running(max_connections=cap) as server:
        slow = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(cap * 2)]

        def trickle() -> None:  # one header byte a second from each, as a slowloris does
            while not stop.wait(1.0):
                for sock in slow:
                    with contextlib.suppress(OSError):
                        sock.send(b"X")

        for sock in slow:
            sock.send(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
        worker = threading.Thread(target=trickle, daemon=True)
        worker.start()
        try:
            for _ in range(5):
                status, took = scrape(server)
                assert status == 200 and took < SCRAPE_BOUND_S
        finally:
            stop.set()
            worker.join(5)
            for sock in slow:
                sock.close()


# TLS ---------------------------------------------------------------------------------------------------------


def test_a_tls_client_that_never_shakes_hands_does_not_block_other_scrapes(tls_files):
    cert, key = tls_files
    from gpudash.exporter.server import TLSSettings

    context = server_context(TLSSettings(str(cert), str(key)))
    with running(tls=context) as server:
        stalled = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(5)]
        try:
            for _ in range(3):
                status, took = scrape(server, client_context(cert))
                assert status == 200 and took < SCRAPE_BOUND_S
        finally:
            for sock in stalled:
                sock.close()


def test_a_stalled_handshake_is_closed_at_its_deadline(tls_files):
    cert, key = tls_files
    from gpudash.exporter.server import TLSSettings

    context = server_context(TLSSettings(str(cert), str(key)))
    with (
        running(tls=context, handshake_s=0.3) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as stalled,
    ):
        assert closed_by_server(stalled, timeout=5)


# The cap -----------------------------------------------------------------------------------------------------


def test_beyond_the_cap_a_newcomer_is_closed_at_once_when_every_connection_is_being_answered():
    release = threading.Event()

    def slow_app(environ, start_response):
        release.wait(20)
        return hello(environ, start_response)

    cap = 4
    with running(app=slow_app, max_connections=cap) as server:
        results: list = []
        busy = [threading.Thread(target=lambda: results.append(scrape_quietly(server))) for _ in range(cap)]
        for thread in busy:
            thread.start()
        try:
            assert wait_until(
                lambda: sum(c.state == "answering" for c in list(server.connections._open.values())) == cap
            )
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as newcomer:
                start = time.monotonic()
                assert closed_by_server(newcomer, timeout=3)
                assert time.monotonic() - start < 2
            assert server.connections.refused >= 1
        finally:
            release.set()
            for thread in busy:
                thread.join(10)
        assert results == [200] * cap  # those being answered were never cut off


def scrape_quietly(server: Server) -> int | str:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        response.read()
        return response.status
    except OSError as exc:
        return type(exc).__name__
    finally:
        conn.close()


def test_bad_requests_get_a_status_and_the_connection_closed():
    with running(max_head_bytes=1024) as server:
        for request, status in (
            (b"NOT HTTP\r\n\r\n", b"400"),
            (b"GET / HTTP/2.0\r\n\r\n", b"505"),
            (b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 2000 + b"\r\n\r\n", b"431"),
            (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"501"),
        ):
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(request)
                answer = b""
                while chunk := sock.recv(4096):
                    answer += chunk
                assert answer.startswith(b"HTTP/1.1 " + status), answer[:80]


# Basic auth ----------------------------------------------------------------------------------------------------


def basic(user: str, password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_basic_auth_accepts_the_right_password_and_refuses_the_rest():
    hashed = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(rounds=4)).replace(b"$2b$", b"$2y$")  # as htpasswd writes
    with running(users={"prometheus": hashed}) as server:
        assert scrape(server, headers=basic("prometheus", "s3cret"))[0] == 200
        assert scrape(server, headers=basic("prometheus", "s3cret"))[0] == 200  # the cached verdict
        assert scrape(server, headers=basic("prometheus", "wrong"))[0] == 401
        assert scrape(server, headers=basic("nobody", "s3cret"))[0] == 401
        assert scrape(server)[0] == 401
        assert scrape(server, headers={"Authorization": "Basic !!!"})[0] == 401
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request("GET", "/metrics")
        assert conn.getresponse().getheader("WWW-Authenticate") == "Basic"
        conn.close()


# The web config file and the command -----------------------------------------------------------------------------


HASH = "$2y$04$" + "a" * 53


def write(folder: Path, text: str) -> str:
    path = folder / "web.yml"
    path.write_text(text)
    return str(path)


def test_web_config_paths_are_relative_to_its_folder(tls_files, tmp_path):
    cert, key = tls_files
    (tmp_path / "c.pem").write_bytes(cert.read_bytes())
    (tmp_path / "k.pem").write_bytes(key.read_bytes())
    text = (
        "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS13\n"
        f"basic_auth_users:\n  alice: '{HASH}'\n"
        "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"
    )
    web = load_web_config(write(tmp_path, text))
    assert web.tls is not None and web.tls.cert_file == str(tmp_path / "c.pem") and web.tls.min_version == "TLS13"
    assert web.users == {"alice": HASH.encode()} and web.headers == (("X-Frame-Options", "deny"),)
    assert load_web_config(write(tmp_path, "")).tls is None  # an empty file: plain HTTP, no users


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("basic_auth_users:\n  alice: plain-text\n", "basic_auth_users.alice: not a bcrypt hash"),
        ("basic_auth_users:\n  alice: '$2y$03$" + "a" * 53 + "'\n", "basic_auth_users.alice: not a bcrypt hash"),
        ("tls_server_config:\n  cert_fil: c.pem\n", "tls_server_config: unknown key 'cert_fil'"),
        ("basic_auth_user:\n  alice: x\n", "the file: unknown key 'basic_auth_user'"),
        (
            "tls_server_config:\n  cert_file: /no/c.pem\n  key_file: /no/k.pem\n",
            "tls_server_config.cert_file: /no/c.pem: No such file",
        ),
        ("tls_server_config:\n  cert_file: /dev/null\n  key_file: /dev/null\n", "/dev/null: not a regular file"),
        ("tls_server_config:\n  client_auth_type: RequireAnyClientCert\n", "RequireAnyClientCert is not supported"),
        ("tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "cipher_suites: not supported"),
        ("rate_limit:\n  interval: 1s\n  burst: 5\n", "rate_limit: not supported"),
        ("http_server_config:\n  headers:\n    X-Powered-By: me\n", "'X-Powered-By' cannot be set"),
        ("basic_auth_users: [alice]\n", "expected a mapping of user names"),
        ("tls_server_config: {cert_file: [\n", "not valid YAML"),
    ],
)
def test_a_bad_web_config_is_one_line_and_exit_2(tmp_path, capsys, text, message):
    path = write(tmp_path, text)
    with pytest.raises(UsageError, match=r"^--web-config "):
        load_web_config(path)
    assert main(["--replay", str(DGX), "serve", "--listen", "127.0.0.1:0", "--web-config", path]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and err.startswith(f"gpudash: error: --web-config {path}")


def test_a_web_config_that_is_not_a_file_is_refused(tmp_path, capsys):
    assert main(["--replay", str(DGX), "serve", "--web-config", str(tmp_path / "missing.yml")]) == 2
    assert "web config not found" in capsys.readouterr().err
    assert main(["--replay", str(DGX), "serve", "--web-config", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_tls_from_the_web_config_and_from_the_options_at_once_is_refused(tls_files, tmp_path, capsys):
    cert, key = tls_files
    path = write(tmp_path, f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
    argv = ["--replay", str(DGX), "serve", "--web-config", path, "--tls-cert", str(cert), "--tls-key", str(key)]
    assert main(argv) == 2
    assert "both set TLS; give one" in capsys.readouterr().err


def test_max_connections_is_checked(capsys):
    assert main(["--replay", str(DGX), "serve", "--max-connections", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "gpudash: error: --max-connections 0: expected a value from 1 to 4096, got 0"
    )


def test_serve_with_a_web_config_answers_https_with_basic_auth(tls_files, tmp_path):
    cert, key = tls_files
    hashed = bcrypt.hashpw(b"scrape-me", bcrypt.gensalt(rounds=4)).decode()
    path = write(
        tmp_path,
        f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\nbasic_auth_users:\n  prometheus: '{hashed}'\n",
    )
    with gpudash_serve("--replay", str(DGX), "--web-config", path) as (url, _):
        assert url.startswith("https://127.0.0.1:")
        request = urllib.request.Request(url, headers=basic("prometheus", "scrape-me"))
        assert "gpudash_device_info" in get(request, context=client_context(cert))
        with pytest.raises(OSError, match="401"):
            get(url, context=client_context(cert))


def test_help_docs_and_behaviour_agree_on_serves_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "3 cannot listen" in help_text and "1 cannot listen" not in help_text
    fleet_doc = " ".join((Path(__file__).parent.parent / "docs" / "fleet.md").read_text().split())
    assert "3 cannot listen" in fleet_doc
    # test_exporter.py's test_a_port_in_use_is_one_line_and_exit_3 runs the failure itself


def test_help_and_plain_serving_never_import_yaml_or_bcrypt():
    """PyYAML and bcrypt are paid for only with a web config (and bcrypt only with users in it)."""
    code = (
        "import contextlib, io, sys\n"
        "import gpudash.cli\n"
        "for argv in (['--help'], ['serve', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        gpudash.cli.main(argv)\n"
        "from gpudash.actions import serve\n"
        "serve.endpoint(serve.parse_listen('127.0.0.1:0'))\n"
        "print(sorted(m for m in ('yaml', 'bcrypt') if m in sys.modules))\n"
    )
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


# The limits from the config's [serve] table ----------------------------------------------------------------------


def test_serve_limits_from_the_config_reach_the_server(tmp_path):
    """[serve] idle_timeout_s and max_head_bytes in a config file change a running `gpudash serve`: an idle
    connection is closed after 0.5 s instead of 20, and a 2 KiB head is answered 431."""
    import os

    from gpudash.actions.serve import SERVE_LIMITS, endpoint, parse_listen
    from gpudash.config import defaults

    serve = defaults()["serve"]
    assert {field: serve[key] for key, field in SERVE_LIMITS.items()} == {
        field: getattr(Limits(), field) for field in SERVE_LIMITS.values()
    }  # the shipped config's values are the server's own defaults
    limits = endpoint(parse_listen("127.0.0.1:0"), limits={**serve, "write_timeout_s": 2.5}).limits
    assert limits.write_s == 2.5 and limits.read_s == serve["read_timeout_s"]
    config = tmp_path / "config.toml"
    config.write_text("[serve]\nidle_timeout_s = 0.5\nmax_head_bytes = 1024\n")
    env = {**os.environ, "GPUDASH_CONFIG": str(config)}
    with gpudash_serve("--replay", str(DGX), "--no-telemetry", env=env) as (url, _):
        port = int(url.split(":")[2].split("/")[0])
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as idle:
            assert closed_by_server(idle, 15.0)
        assert time.monotonic() - started < 10.0  # the default is 20 s
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 2048 + b"\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 431")
        assert "gpudash_device_info" in get(url)  # a normal scrape fits


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("read_timeout_s = 0", "serve.read_timeout_s: expected a value from 0.1 to 600, got 0 (line 2)"),
        ("idle_timeout_s = true", "serve.idle_timeout_s: expected a number, got bool True (line 2)"),
        ("max_head_bytes = 100", "serve.max_head_bytes: expected a value from 1024 to 1048576, got 100 (line 2)"),
        ("max_body_bytes = 'big'", "serve.max_body_bytes: expected an integer, got str 'big' (line 2)"),
        ("handshake_timeout_s = 301", "serve.handshake_timeout_s: expected a value from 0.1 to 300, got 301 (line 2)"),
        ("write_timeout_s = -1.0", "serve.write_timeout_s: expected a value from 0.1 to 600, got -1.0 (line 2)"),
    ],
)
def test_a_bad_serve_limit_in_the_config_is_one_line_and_exit_2(tmp_path, capsys, line, message):
    config = tmp_path / "config.toml"
    config.write_text(f"[serve]\n{line}\n")
    assert main(["--config", str(config), "--replay", str(DGX), "serve", "--listen", "127.0.0.1:0"]) == 2
    assert capsys.readouterr().err.strip() == f"gpudash: error: {config}: {message}"
