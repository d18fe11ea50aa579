"""Writing output files: regular files replaced atomically with the umask's mode, streams streamed, and
everything else (links, directories, devices) refused with one line and never replaced."""

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash import fileio
from gpudash.cli import main
from gpudash.errors import RefusedOutput
from gpudash.fileio import CREATED, REPLACED, STREAMED, check_output, write_output

H100 = str(Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "h100-80gb.json")


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path, umask, mask, expected):
    umask(mask)
    path = tmp_path / "out.toml"
    assert write_output(path, "a = 1\n") == CREATED
    assert path.read_text() == "a = 1\n" and mode(path) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["out.toml"]  # no temporary file left


def test_an_existing_file_is_replaced_whole_and_keeps_its_mode(tmp_path, umask):
    umask(0o077)
    path = tmp_path / "out.toml"
    path.write_text("old\n")
    os.chmod(path, 0o640)
    before = os.stat(path).st_ino
    assert write_output(path, "new\n") == REPLACED
    assert path.read_text() == "new\n" and mode(path) == 0o640
    assert os.stat(path).st_ino != before  # a new file renamed over it, not the old one rewritten in place
    assert fileio.atomic_write_text(path, "again\n") is True


def test_dash_is_stdout(capsys):
    assert write_output("-", "to stdout\n") == STREAMED
    assert capsys.readouterr().out == "to stdout\n"


def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader holds it open, as `cat pipe &` would
    try:
        assert write_output(fifo, "through the pipe\n") == STREAMED
        assert os.read(reader, 100) == b"through the pipe\n"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_fifo_nothing_reads_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(RefusedOutput, match=f"^{fifo}: is a pipe \\(FIFO\\) that nothing reads; nothing written$"):
        write_output(fifo, "nobody listens\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_files_gpudash_rewrites_are_never_streams(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, os.devnull, "-"):
        with pytest.raises(RefusedOutput, match="this file is written only as a regular file"):
            write_output(path, "x", streams=False)
        with pytest.raises(RefusedOutput, match=r"^--save .*this file is written only as a regular file"):
            check_output(path, "--save", streams=False)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("ro_mode", [0o444, 0o400, 0o555])
def test_a_read_only_file_is_kept_unless_forced(tmp_path, ro_mode):
    path = tmp_path / "kept.toml"
    path.write_text("mine\n")
    os.chmod(path, ro_mode)
    with pytest.raises(RefusedOutput, match=f"^{path}: is read-only \\(mode {ro_mode:04o}\\).*pass --force"):
        write_output(path, "theirs\n")
    with pytest.raises(RefusedOutput, match=f"^-o {path}: is read-only"):
        check_output(path, "-o")
    assert path.read_text() == "mine\n" and mode(path) == ro_mode
    with fileio.forcing(True):
        check_output(path, "-o")
        assert write_output(path, "forced\n") == REPLACED
    assert path.read_text() == "forced\n" and mode(path) == ro_mode  # the mode it had, kept


def test_a_terminal_is_written_as_a_stream():
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
        assert write_output(name, "on the terminal") == STREAMED
        assert b"on the terminal" in os.read(master, 1000)
        assert stat.S_ISCHR(os.stat(name).st_mode)
    finally:
        os.close(master)
        os.close(slave)


def test_dev_null_is_a_stream_and_stays_a_device():
    before = os.stat(os.devnull)
    assert write_output(os.devnull, "discarded") == STREAMED
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_another_character_device_is_refused_untouched():
    before = os.stat("/dev/zero")
    with pytest.raises(RefusedOutput, match=r"^/dev/zero: is a character device \(1:5\), not a terminal"):
        write_output("/dev/zero", "x")
    assert os.stat("/dev/zero").st_ino == before.st_ino


def test_a_symlink_is_refused_and_neither_it_nor_its_target_changes(tmp_path):
    target = tmp_path / "real.toml"
    target.write_text("keep me\n")
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    with pytest.raises(RefusedOutput, match=f"^{link}: is a symbolic link \\(to {target}\\)"):
        write_output(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target) and target.read_text() == "keep me\n"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RefusedOutput, match="is a symbolic link"):
        write_output(dangling, "new\n")
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "link.toml", "real.toml"]


def test_a_directory_and_a_socket_are_refused(tmp_path):
    with pytest.raises(RefusedOutput, match=f"^{tmp_path}: is a directory, not a file$"):
        write_output(tmp_path, "x")
    sock_path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(RefusedOutput, match="is a socket"):
            write_output(sock_path, "x")
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        sock.close()


def test_something_that_appears_while_writing_is_not_replaced(tmp_path, monkeypatch):
    path = tmp_path / "out.toml"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    real_fsync = os.fsync

    def plant_a_link(fd):  # the moment between writing the temporary file and moving it into place
        real_fsync(fd)
        if not path.is_symlink():
            path.symlink_to(victim)

    monkeypatch.setattr(fileio.os, "fsync", plant_a_link)
    with pytest.raises(RefusedOutput, match="stopped being a regular file while gpudash wrote it"):
        write_output(path, "x")
    assert path.is_symlink() and victim.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.toml", "victim"]


def test_check_output_names_the_option(tmp_path):
    link = tmp_path / "l"
    link.symlink_to(tmp_path)
    with pytest.raises(RefusedOutput, match=f"^--save {link}: is a symbolic link"):
        check_output(link, "--save")
    check_output(tmp_path / "new.json", "--save")  # a new file in a folder that exists: fine
    with pytest.raises(RefusedOutput, match=f"^-o {tmp_path}/no/x.toml: folder {tmp_path}/no does not exist$"):
        check_output(tmp_path / "no" / "x.toml", "-o")
    check_output("-", "-o")


WRITE_TO_DEV_STDOUT = "from gpudash.fileio import write_output; print(write_output('/dev/stdout', 'via dev stdout\\n'))"


def test_dev_stdout_writes_to_stdout_whether_a_pipe_or_a_file(tmp_path):
    res = subprocess.run([sys.executable, "-c", WRITE_TO_DEV_STDOUT], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "via dev stdout\nstreamed\n"
    out = tmp_path / "redirected.txt"
    with open(out, "w") as fh:  # `gpudash ... -o /dev/stdout > file`: the file gets it, the link is not replaced
        res = subprocess.run([sys.executable, "-c", WRITE_TO_DEV_STDOUT], stdout=fh, stderr=subprocess.PIPE, text=True)
    assert res.returncode == 0, res.stderr
    assert out.read_text() == "via dev stdout\nstreamed\n"
    assert os.path.islink("/dev/stdout")


def test_export_to_a_symlink_is_one_line_and_exit_2(tmp_path, capsys):
    target = tmp_path / "real.toml"
    target.write_text("keep me\n")
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(link)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"gpudash: error: -o {link}: is a symbolic link (to {target}); gpudash does not replace links: name the file itself"
    )
    assert link.is_symlink() and target.read_text() == "keep me\n"


def test_snapshot_to_dev_null_discards_and_leaves_the_device(capsys):
    assert main(["--replay", H100, "snapshot", "--seconds", "0", "-o", os.devnull]) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
