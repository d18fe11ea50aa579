"""Every file gpudash writes, walked through what must never be replaced (issue 27).

The writers are found from the CLI's own argparse definitions: every option marked as a file to write
(gpudash.cli.arguments.OutputPath, e.g. export -o, snapshot -o, bench --save, serve --textfile) and every
command marked as remembering results (ForceWithState: probe, bench, check, export). Each is pointed at a device
node, a symbolic link, a FIFO nobody reads, a directory, a read-only file and a file on a full filesystem; what
was there must be exactly as it was, and the command must say so in one line: exit 2 for a path gpudash refuses,
exit 3 when the disk is full (gpudash.errors). A state file that is refused costs one warning line, never the
run's result. A new writer without an entry in QUICK below fails test_every_writer_has_a_quick_run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpudash.cli import build_parser, main
from gpudash.cli.arguments import ForceOption, ForceWithState, OutputPath

REPO = Path(__file__).resolve().parent.parent
H100 = str(REPO / "examples" / "snapshots" / "h100-80gb.json")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

# How to run each writing command in about a second: a replayed machine for the output files (nothing measured),
# the CPU with one precision for the commands whose point is to remember a measurement.
QUICK = {
    "export": ["--replay", H100, "export", "--bench", "none"],
    "snapshot": ["--replay", H100, "snapshot", "--seconds", "0"],
    "bench": ["--replay", H100, "bench", "--no-plugins"],
    "serve": ["--replay", H100, "serve"],
}
QUICK_STATE = {
    "probe": ["probe", "--device", "cpu", "--precisions", "fp32"],
    "bench": ["bench", "--device", "cpu", "--precisions", "fp32", "--no-plugins", "--case-budget", "0.05"],
}
# Commands that remember results, but not with a quick run on a machine without a GPU (said why).
NOTHING_REMEMBERED_HERE = {
    "check": "on a machine without a GPU every built-in check is skipped, and skips are not remembered",
    "export": "export remembers its probe and benchmark, which QUICK_STATE's probe and bench already walk",
}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def output_options() -> list[tuple[str, str, OutputPath]]:
    """(command, option, its action) for every option that names a file gpudash writes."""
    return [
        (name, action.option_strings[-1], action)
        for name, parser in _subcommands().items()
        for action in parser._actions
        if isinstance(action, OutputPath)
    ]


def state_commands() -> list[str]:
    return [
        name for name, parser in _subcommands().items() if any(isinstance(a, ForceWithState) for a in parser._actions)
    ]


def test_every_writer_has_force_and_a_quick_run():
    writers = output_options()
    assert {w[0] for w in writers} >= {"export", "snapshot", "bench", "serve"}, writers
    for command, option, _ in writers:
        parser = _subcommands()[command]
        assert any(isinstance(a, ForceOption) for a in parser._actions), f"{command} {option}: no --force"
        assert command in QUICK, f"{command} {option}: add a quick way to run it to QUICK"
    for command in state_commands():
        assert command in QUICK_STATE or command in NOTHING_REMEMBERED_HERE, command


def test_no_option_names_a_file_to_write_unmarked():
    """An option spelled like an output (-o, --output, --save, --textfile, --write...) is a marked writer."""
    for name, parser in _subcommands().items():
        for action in parser._actions:
            spelled = {s.lstrip("-") for s in action.option_strings}
            if spelled & {"o", "output", "save", "textfile", "write", "out", "dump"}:
                assert isinstance(action, OutputPath), f"{name} {action.option_strings}: mark it (add_output_option)"


# --- what is put at the path -----------------------------------------------------------------------------------

PRECIOUS = "precious: not gpudash's to replace\n"


def _regular(path: Path, mode: int = 0o640) -> None:
    path.write_text(PRECIOUS)
    os.chmod(path, mode)


def _fingerprint(path: Path) -> tuple:
    """Everything that must not change: type, mode, owner, inode, device numbers, and for files the content."""
    st = os.lstat(path)
    content: object = None
    if stat.S_ISREG(st.st_mode):
        content = path.read_bytes()
    elif stat.S_ISLNK(st.st_mode):
        content = (os.readlink(path), _fingerprint(path.parent / os.readlink(path)) if path.exists() else None)
    elif stat.S_ISDIR(st.st_mode):
        content = sorted(p.name for p in path.iterdir())
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_ino, st.st_rdev, content)


def _make(kind: str, path: Path) -> None:
    if kind == "device":
        if not IS_ROOT:
            pytest.skip("making a device node needs root")
        zero = os.stat("/dev/zero").st_rdev  # a character device that is neither a terminal nor /dev/null
        os.mknod(path, 0o666 | stat.S_IFCHR, zero)
    elif kind == "symlink":
        target = path.parent / "the-real-file"
        _regular(target)
        path.symlink_to(target.name)
    elif kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text(PRECIOUS)
    elif kind == "read-only":
        _regular(path, 0o444)
    else:
        raise AssertionError(kind)


@contextlib.contextmanager
def full_filesystem(base: Path) -> Iterator[Path]:
    """A small empty tmpfs (root only); `fill` then takes its last byte."""
    if not IS_ROOT or not sys.platform.startswith("linux"):
        pytest.skip("mounting a small tmpfs needs root on Linux")
    mount = base / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> None:
    """Write one file until the filesystem has no byte left."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        for size in (4096, 1):
            with contextlib.suppress(OSError):
                while fh.write(b"\0" * size):
                    pass


def _one_error_line(err: str, path: Path) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("gpudash: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    assert str(path) in errors[0], errors[0]
    return errors[0]


HOSTILE = ["device", "symlink", "fifo", "directory", "read-only"]
EXPECTED = {
    "device": "is a character device",
    "symlink": "is a symbolic link",
    "fifo": "is a pipe (FIFO)",
    "directory": "is a directory",
    "read-only": "is read-only (mode 0444)",
}


def _argv(command: str, option: str, path: Path) -> list[str]:
    return [*QUICK[command], option, str(path)]


def _name(action: OutputPath) -> str:
    return "out.prom" if (action.metavar or "").endswith(".prom") else "out.file"


WRITERS = output_options()
IDS = [f"{c}{o}" for c, o, _ in WRITERS]


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize(("command", "option", "action"), WRITERS, ids=IDS)
def test_a_writer_never_replaces_what_is_not_its_file(command, option, action, kind, tmp_path, capsys):
    path = tmp_path / _name(action)
    _make(kind, path)
    before, listing = _fingerprint(path), sorted(p.name for p in tmp_path.iterdir())
    assert main(_argv(command, option, path)) == 2
    line = _one_error_line(capsys.readouterr().err, path)
    if kind == "fifo" and action.streams:  # a pipe is a stream for -o, refused only because nothing reads it
        assert "is a pipe (FIFO) that nothing reads" in line
    else:
        assert EXPECTED[kind] in line, line
    assert _fingerprint(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing  # no temporary file left behind


@pytest.mark.parametrize(("command", "option", "action"), WRITERS, ids=IDS)
def test_force_replaces_a_read_only_file_keeping_its_mode(command, option, action, tmp_path, capsys):
    path = tmp_path / _name(action)
    _regular(path, 0o444)
    assert main([*_argv(command, option, path), "--force"]) == 0, capsys.readouterr().err
    assert path.read_text() != PRECIOUS and stat.S_IMODE(os.stat(path).st_mode) == 0o444


@pytest.mark.parametrize(("command", "option", "action"), WRITERS, ids=IDS)
def test_a_full_disk_loses_nothing(command, option, action, tmp_path, capsys):
    with full_filesystem(tmp_path) as mount:
        path = mount / _name(action)
        _regular(path)
        fill(mount)
        before = _fingerprint(path)
        assert main(_argv(command, option, path)) == 3
        line = _one_error_line(capsys.readouterr().err, path)
        assert "No space left on device" in line, line
        assert _fingerprint(path) == before
        assert sorted(p.name for p in mount.iterdir()) == sorted(["filler", path.name])  # no temporary file


# --- the state store -------------------------------------------------------------------------------------------


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *argv], capture_output=True, text=True, env=env, timeout=300, cwd=REPO
    )


@pytest.fixture(scope="module")
def state_runs(tmp_path_factory):
    """For each quick state command: (its env, the state files a first run created, that run)."""
    found = {}
    for command, argv in QUICK_STATE.items():
        base = tmp_path_factory.mktemp(f"state-{command}")
        env = {**os.environ, "XDG_STATE_HOME": str(base / "state"), "XDG_CONFIG_HOME": str(base / "config")}
        first = _run(argv, env)
        assert first.returncode in (0, 1), first.stderr
        files = {p: p.read_bytes() for p in sorted((base / "state" / "gpudash").glob("*.json"))}
        assert files, f"{command}: a quick run remembered nothing"
        found[command] = (env, files, first)
    return found


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("command", sorted(QUICK_STATE))
def test_a_state_file_that_is_not_a_file_costs_one_line_never_the_result(command, kind, state_runs):
    env, files, first = state_runs[command]
    for path, kept in files.items():
        path.unlink(missing_ok=True)  # the first run made it; an earlier case took it away
        if kind == "read-only":  # what the first run remembered, made read-only: read, never replaced
            path.write_bytes(kept)
            os.chmod(path, 0o444)
        else:
            _make(kind, path)
    try:
        before = {p: _fingerprint(p) for p in files}
        done = _run(QUICK_STATE[command], env)  # a FIFO state file hung probe forever after measuring
        assert done.returncode == first.returncode, done.stderr
        assert "fp32" in done.stdout and len(done.stdout.splitlines()) >= 2  # the run's result, printed
        for path in files:
            said = [line for line in done.stderr.splitlines() if str(path) in line]
            assert len(said) == 1, done.stderr
            assert EXPECTED[kind] in said[0] or (kind == "device" and "is a device" in said[0]), said
            assert _fingerprint(path) == before[path]
    finally:
        for path in files:
            _undo(path)


def _undo(path: Path) -> None:
    """Take away what a case put at the state path (the next case makes its own)."""
    if path.is_dir() and not path.is_symlink():
        for inner in path.iterdir():
            inner.unlink()
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
    (path.parent / "the-real-file").unlink(missing_ok=True)
