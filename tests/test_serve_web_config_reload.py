"""`gpudash serve --web-config FILE` reads the file again when it changes, as exporter-toolkit does: users and
certificates change without a restart, and a file that turns bad leaves the last good config serving, with one
warning. Over loopback with real TLS handshakes."""

from __future__ import annotations

import os
import ssl
import urllib.request
from pathlib import Path

import bcrypt
import pytest
from servers import DGX, gpudash_serve, self_signed_certificate, stderr_line, stop
from test_serve_limits import basic, client_context, running, scrape

from gpudash.exporter.server import load_web_config
from gpudash.exporter.server.reload import WebConfigWatch
from gpudash.exporter.server.tls import server_context

pytestmark = pytest.mark.light


def bcrypt_hash(password: str) -> str:
    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


def config_text(cert: Path, key: Path, users: dict[str, str]) -> str:
    listed = "".join(f"  {user}: '{hashed}'\n" for user, hashed in users.items())
    return f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\nbasic_auth_users:\n{listed}"


def replace_file(path: Path, text: str) -> None:
    """As a deployment writes it: a new file renamed over the old one."""
    new = path.with_suffix(".new")
    new.write_text(text)
    os.replace(new, path)


def status_of(url: str, context: ssl.SSLContext, user: str, password: str) -> int:
    request = urllib.request.Request(url, headers=basic(user, password))
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_changed_user_is_taken_without_a_restart_and_a_bad_file_keeps_the_last_good(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    trust = client_context(cert)
    path = tmp_path / "web.yml"
    path.write_text(config_text(cert, key, {"alice": bcrypt_hash("old-pass")}))
    with gpudash_serve("--replay", str(DGX), "--no-telemetry", "--web-config", str(path)) as (url, proc):
        assert url.startswith("https://")
        assert status_of(url, trust, "alice", "old-pass") == 200  # a real TLS handshake each time
        assert status_of(url, trust, "bob", "new-pass") == 401
        replace_file(path, config_text(cert, key, {"bob": bcrypt_hash("new-pass")}))
        assert "again: TLS, basic auth for 1 user" in stderr_line(proc, "again")
        assert status_of(url, trust, "bob", "new-pass") == 200
        assert status_of(url, trust, "alice", "old-pass") == 401
        path.write_text("basic_auth_users:\n  bob: plain-text\n")  # in place, and wrong
        warning = stderr_line(proc, "warning")
        assert warning.strip() == (
            f"gpudash: warning: --web-config {path}: basic_auth_users.bob: not a bcrypt hash (expected $2y$10$ and "
            "53 characters, as `htpasswd -nBC 10 \"\" | tr -d ':\\n'` prints); still serving with the web config "
            "read before"
        )
        assert status_of(url, trust, "bob", "new-pass") == 200  # the last good config, still over TLS
        assert proc.poll() is None
        stop(proc)
        rest = proc.stderr.read()
        assert "warning" not in rest  # one warning for the one change, not one a second


def test_a_renewed_certificate_and_bad_changes_each_said_once(tmp_path):
    """In-process, each check called by the test: a certificate replaced at its path is served from the next
    connection on; a file that turns bad, or would switch HTTPS to HTTP, changes nothing and is said once."""
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old_cert, old_key = self_signed_certificate(tmp_path / "old")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_bytes(old_cert.read_bytes())
    key.write_bytes(old_key.read_bytes())
    path = tmp_path / "web.yml"
    path.write_text(config_text(cert, key, {"alice": bcrypt_hash("pw")}))
    first = load_web_config(str(path))
    assert first.tls is not None
    said: list[str] = []
    with running(tls=server_context(first.tls), users=first.users) as server:
        watch = WebConfigWatch(server, str(path), first, say=said.append)
        assert watch.check() is False  # nothing changed
        assert scrape(server, client_context(old_cert), basic("alice", "pw"))[0] == 200
        new_cert, new_key = self_signed_certificate(tmp_path / "new")
        replace_file(key, new_key.read_text())
        replace_file(cert, new_cert.read_text())
        assert watch.check() is True and server.reconfigured == 1
        assert scrape(server, client_context(new_cert), basic("alice", "pw"))[0] == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            scrape(server, client_context(old_cert))
        path.write_text("basic_auth_users: [alice]\n")
        assert watch.check() is False and watch.check() is False
        assert len(said) == 2 and said[1].startswith(f"gpudash: warning: --web-config {path}: basic_auth_users:")
        path.write_text(f"basic_auth_users:\n  alice: '{bcrypt_hash('pw')}'\n")  # no TLS: would be plain HTTP
        assert watch.check() is False and watch.check() is False
        assert said[2] == (
            f"gpudash: warning: --web-config {path}: switching between HTTP and HTTPS needs a restart; "
            "still serving with the web config read before"
        )
        assert len(said) == 3 and server.reconfigured == 1
        assert scrape(server, client_context(new_cert), basic("alice", "pw"))[0] == 200


def test_a_same_size_rewrite_within_one_timestamp_tick_is_seen(tmp_path):
    """A user's hash replaced in place by one of the same length, with the file's times put back as they were
    (a coarse-timestamp file system, or a tool that keeps them): the contents alone tell the change."""
    cert, key = self_signed_certificate(tmp_path)
    path = tmp_path / "web.yml"
    path.write_text(config_text(cert, key, {"alice": bcrypt_hash("old-pass")}))
    first = load_web_config(str(path))
    assert first.tls is not None
    before = path.stat()
    said: list[str] = []
    with running(tls=server_context(first.tls), users=first.users) as server:
        watch = WebConfigWatch(server, str(path), first, say=said.append)
        assert scrape(server, client_context(cert), basic("alice", "old-pass"))[0] == 200
        with open(path, "r+") as f:  # in place: same inode, same size
            f.write(config_text(cert, key, {"alice": bcrypt_hash("new-pass")}))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
        assert watch.check() is True, said
        assert scrape(server, client_context(cert), basic("alice", "new-pass"))[0] == 200
        assert scrape(server, client_context(cert), basic("alice", "old-pass"))[0] == 401
