"""`gpudash serve --tls-cert/--tls-key` loads the pair again when the files change (a renewed certificate: certbot
or cert-manager rotating them in place or behind a symlink), without a restart: new handshakes get the new
certificate; a pair that cannot be used (key not the certificate's, a file half-written or missing) keeps the
last good one, with one warning naming the file. Over real TLS on 127.0.0.1, each certificate told apart by
its serial number (openssl -set_serial)."""

from __future__ import annotations

import os
import socket
import ssl
from pathlib import Path

import pytest
from servers import DGX, gpudash_serve, self_signed_certificate, stderr_line, stop
from test_serve_limits import running, scrape

from gpudash.exporter.server.reload import TLSFilesWatch, pair_context

pytestmark = pytest.mark.light


def trusting(*certs: Path) -> ssl.SSLContext:
    """A client that trusts each of these self-signed certificates (and checks the name, 127.0.0.1)."""
    return ssl.create_default_context(cadata="".join(c.read_text() for c in certs))


def served_serial(port: int, context: ssl.SSLContext) -> int:
    """The serial number of the certificate a new TLS connection to 127.0.0.1:port is shown."""
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        peer = tls.getpeercert()
        assert peer is not None
        return int(str(peer["serialNumber"]), 16)


def point(link: Path, target: Path) -> None:
    """Move the symlink `link` to `target` at once, as Kubernetes swaps a mounted secret's ..data."""
    new = link.with_name(link.name + ".new")
    new.symlink_to(target)
    os.replace(new, link)


def test_a_rotated_pair_is_served_and_bad_pairs_keep_the_last_good(tmp_path):
    """A running `gpudash serve`, its --tls-cert/--tls-key behind a symlinked folder swapped whole."""
    versions = {n: self_signed_certificate(tmp_path / f"v{n}", n) for n in (1, 2, 3, 4, 5)}
    trust = trusting(*(cert for cert, _ in versions.values()))
    live = tmp_path / "live"
    live.symlink_to(tmp_path / "v1")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.symlink_to(live / "cert.pem")
    key.symlink_to(live / "key.pem")
    args = ("--replay", str(DGX), "--no-telemetry", "--tls-cert", str(cert), "--tls-key", str(key))
    with gpudash_serve(*args) as (url, proc):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert served_serial(port, trust) == 1

        point(live, tmp_path / "v2")  # renewed
        assert stderr_line(proc, "again").strip() == (
            f"gpudash: read --tls-cert {cert} and --tls-key {key} again: new connections get the new certificate"
        )
        assert served_serial(port, trust) == 2

        def refused(name: str, cert_pem: bytes, key_pem: bytes | None, warning: str) -> None:
            """The live folder swapped to a pair that cannot be used: one warning, the last good one served."""
            folder = tmp_path / name
            folder.mkdir()
            (folder / "cert.pem").write_bytes(cert_pem)
            if key_pem is not None:
                (folder / "key.pem").write_bytes(key_pem)
            point(live, folder)
            assert stderr_line(proc, "warning").strip() == (
                f"gpudash: warning: {warning}; still serving with the certificate read before"
            )
            assert served_serial(port, trust) == 2

        pem = {n: (c.read_bytes(), k.read_bytes()) for n, (c, k) in versions.items()}
        refused(  # certificate 3 with key 4
            "mismatched",
            pem[3][0],
            pem[4][1],
            f"--tls-key {key}: not the private key of the certificate in --tls-cert {cert}",
        )
        refused(  # certificate 3 cut in the middle, as a copy still under way leaves it
            "half",
            pem[3][0][: len(pem[3][0]) // 2],
            pem[3][1],
            f"--tls-cert {cert}: no whole PEM certificate in it (empty, or still being written)",
        )
        refused("keyless", pem[5][0], None, f"--tls-key {key}: cannot read it: No such file or directory")

        point(live, tmp_path / "v5")  # a good pair again
        assert "again: new connections get the new certificate" in stderr_line(proc, "again")
        assert served_serial(port, trust) == 5
        assert proc.poll() is None
        stop(proc)
        assert "warning" not in proc.stderr.read()  # one warning per change, not one a second


def test_a_pair_rewritten_in_place_one_file_at_a_time(tmp_path):
    """In-process, each check called by the test: the certificate written over in place before its key (a
    mismatch in between, said once), then a half-written one; the server keeps answering with the last good
    certificate, and the accepting thread never waits on the loading."""
    versions = {n: self_signed_certificate(tmp_path / f"v{n}", n) for n in (1, 2, 3)}
    trust = trusting(*(c for c, _ in versions.values()))
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_bytes(versions[1][0].read_bytes())
    key.write_bytes(versions[1][1].read_bytes())
    said: list[str] = []
    with running(tls=pair_context(str(cert), str(key))) as server:
        watch = TLSFilesWatch(server, str(cert), str(key), say=said.append)
        assert watch.check() is False and served_serial(server.port, trust) == 1

        cert.write_bytes(versions[2][0].read_bytes())  # in place: the certificate first
        assert watch.check() is False and watch.check() is False
        assert said == [
            f"gpudash: warning: --tls-key {key}: not the private key of the certificate in --tls-cert {cert}; "
            "still serving with the certificate read before"
        ]
        assert served_serial(server.port, trust) == 1
        key.write_bytes(versions[2][1].read_bytes())  # then its key
        assert watch.check() is True and served_serial(server.port, trust) == 2
        assert scrape(server, trust)[0] == 200

        text = versions[3][0].read_bytes()
        cert.write_bytes(text[: len(text) // 3])
        assert watch.check() is False and len(said) == 3
        assert said[2].startswith(f"gpudash: warning: --tls-cert {cert}: no whole PEM certificate in it")
        assert served_serial(server.port, trust) == 2
        key.write_bytes(versions[3][1].read_bytes())  # the key now matches certificate 3, still half-written
        assert watch.check() is False and len(said) == 4 and served_serial(server.port, trust) == 2
        cert.write_bytes(text)
        assert watch.check() is True and served_serial(server.port, trust) == 3
        assert (watch.reloads, watch.refused) == (2, 3)


def test_a_plain_http_server_takes_no_certificate(tmp_path):
    cert, key = self_signed_certificate(tmp_path, 7)
    said: list[str] = []
    with running() as server:
        watch = TLSFilesWatch(server, str(cert), str(key), say=said.append)
        cert.write_bytes(cert.read_bytes() + b"\n")
        assert watch.check() is False and server.tls is None
        assert said == [
            "gpudash: warning: switching between HTTP and HTTPS needs a restart; "
            "still serving with the certificate read before"
        ]
