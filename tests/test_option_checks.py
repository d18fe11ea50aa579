"""Options and files that used to fail silently (issue 27 item 6): each is refused before any work starts, with
one line naming the option or file, exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpudash import fileio
from gpudash.cli import main

H100 = str(Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "h100-80gb.json")


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a fleet round or a device discovery starts: the checks come first."""

    def started(*_a, **_k):
        raise AssertionError("work started before the options were checked")

    monkeypatch.setattr("gpudash.actions.fleet.open_source", started)
    monkeypatch.setattr("gpudash.devices.discover", started)


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "0"], "gpudash: error: --timeout: expected seconds above 0, at most 60, got 0"),
        (["--concurrency", "0"], "gpudash: error: --concurrency: expected 1 to 128 requests at once, got 0"),
        (["--ca-file", "/no/such/ca.pem"], "gpudash: error: --ca-file /no/such/ca.pem: no such file"),
    ],
)
def test_fleet_numbers_and_files_are_checked_first(argv, message, no_work, capsys):
    assert main(["fleet", "--hosts", "127.0.0.1:9", *argv]) == 2
    assert one_line(capsys).startswith(message)


def test_fleet_ca_file_that_is_not_pem_or_a_fifo(tmp_path, no_work, capsys):
    text = tmp_path / "ca.pem"
    text.write_text("not a certificate\n")
    assert main(["fleet", "--hosts", "127.0.0.1:9", "--ca-file", str(text)]) == 2
    assert f"--ca-file {text}: not a PEM CA bundle" in one_line(capsys)
    fifo = tmp_path / "ca.fifo"
    os.mkfifo(fifo)
    assert main(["fleet", "--hosts", "127.0.0.1:9", "--ca-file", str(fifo)]) == 2  # never waits on the pipe
    assert f"--ca-file {fifo}: is a pipe (FIFO), not a regular file" in one_line(capsys)


@pytest.mark.parametrize("hosts", [" , ,", ",", " "])
def test_fleet_hosts_naming_no_endpoint_names_hosts(hosts, no_work, capsys):
    assert main(["fleet", "--hosts", hosts]) == 2
    line = one_line(capsys)
    assert line.startswith("gpudash: error: --hosts") and "hostfile" not in line, line
    assert "names no endpoint" in line or "expected a value, got an empty one" in line, line


def test_tls_cert_that_is_a_fifo_says_so(tmp_path, capsys):
    fifo = tmp_path / "cert.pem"
    os.mkfifo(fifo)
    key = tmp_path / "key.pem"
    key.write_text("x")
    assert main(["--replay", H100, "serve", "--tls-cert", str(fifo), "--tls-key", str(key)]) == 2
    assert one_line(capsys) == (
        f"gpudash: error: --tls-cert {fifo}: is a pipe (FIFO), not a regular file (a PEM certificate expected)"
    )


@pytest.mark.parametrize("kind", ["directory", "fifo", "dev-zero-link", "dangling-link"])
def test_a_user_config_that_is_not_a_file_is_one_line(kind, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = tmp_path / "gpudash" / "config.toml"
    path.parent.mkdir()
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    else:
        path.symlink_to(tmp_path / "gone.toml")
    assert main(["--replay", H100, "info"]) == 2
    line = one_line(capsys)
    assert line.startswith(f"gpudash: error: {path}: ") and ("config file" in line), line


def test_export_over_a_read_only_file_is_refused_before_work(tmp_path, monkeypatch, capsys):
    path = tmp_path / "gpudash.toml"
    path.write_text("mine\n")
    os.chmod(path, 0o444)
    monkeypatch.setattr("gpudash.actions.export.export_settings", lambda *a, **k: pytest.fail("work started"))
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(path)]) == 2
    assert one_line(capsys).startswith(f"gpudash: error: -o {path}: is read-only (mode 0444)")
    assert path.read_text() == "mine\n"
    assert fileio._FORCE.get() is False  # --force did not leak out of the command
