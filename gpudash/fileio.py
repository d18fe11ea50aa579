"""Writing and reading the files a user names.

Every file gpudash writes (export -o, snapshot -o, bench --save, serve --textfile, the state store) goes
through write_output:

- a regular file, or a path where nothing exists yet, is replaced whole or not at all: a temporary file in
  the same folder is written, synced and renamed over it, so a crash or a full disk never leaves half a file.
  A new file gets the mode the umask gives (0666 less the umask, like any other program's output); a replaced
  one keeps its mode and its owner (when the owner cannot be kept, it is not replaced).
- a regular file nobody may write (no write bit, e.g. 0444) or that this user may not write is refused: it was
  made read-only on purpose. The command's `--force` replaces it all the same (keeping its mode and owner).
- for one-shot outputs (`streams=True`: export -o, snapshot -o), `-`, a terminal, a pipe (FIFO) that a reader
  holds open, /dev/stdout (any path that is this process's standard output) and /dev/null are written as a
  stream: opened, written, closed, never created or replaced. A FIFO nothing reads is refused at once, never
  waited on. Files gpudash rewrites for others to read (`streams=False`: the textfile, profiles, the state
  store) are only ever regular files.
- anything else is refused with one line naming the path: a directory, a symbolic link to a file (replacing
  it would replace the link, not the file it points to), a socket, a block device, or a character device
  that is neither a terminal nor /dev/null. Nothing that was not a regular file is ever replaced.

Every file gpudash reads (snapshot, profile, config, remembered results, export) goes through read_user_file:
a regular file of at most MAX_INPUT_BYTES, opened without blocking; anything else is one line, at once.

/dev/null is accepted because it is where people send output they do not want; writing to it has no effect,
while refusing it would break `-o /dev/null` in scripts. Only its replacement (as root) was ever the danger.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from gpudash.errors import GpudashError, RefusedOutput, UsageError

CREATED, REPLACED, STREAMED = "created", "replaced", "streamed"

# What a path is, as far as writing goes.
_STDOUT, _STREAM, _NEW, _REGULAR = "stdout", "stream", "new", "regular"

# Linux character-device majors of terminals (Documentation/admin-guide/devices.txt): 4 virtual consoles and
# serial ports, 5 /dev/tty and /dev/console, 136-143 pseudo-terminals. 5:2 is /dev/ptmx, which makes a new
# terminal when opened: not a terminal to write to.
_TERMINAL_MAJORS = frozenset({4, 5, *range(136, 144)})
_PTMX = (5, 2)


# Whether the running command was given --force (read-only files may be replaced). Set once by the CLI for
# the command's run (`forcing`), so every writer below it, down to the state store, follows the same word.
_FORCE: contextvars.ContextVar[bool] = contextvars.ContextVar("gpudash_force", default=False)


@contextlib.contextmanager
def forcing(force: bool) -> Iterator[None]:
    """Within this block, writers replace read-only files when `force` is true (the command's --force)."""
    token = _FORCE.set(force)
    try:
        yield
    finally:
        _FORCE.reset(token)


def write_output(path: str | os.PathLike[str], text: str, *, streams: bool = True, force: bool | None = None) -> str:
    """Write `text` to `path` ("-" is stdout) as described above; CREATED, REPLACED or STREAMED.

    `streams=False`: only a regular file or a new path. `force`: replace a read-only file (None: the
    command's --force). Raises RefusedOutput (exit 2) for a path gpudash will not write to, GpudashError
    (exit 3) when the write fails (a full disk): either way what was at `path` is as it was.
    """
    kind = _classify(path, streams)
    force = _FORCE.get() if force is None else force
    if kind == _STDOUT:
        sys.stdout.write(text)
        sys.stdout.flush()
        return STREAMED
    if kind == _STREAM:
        _write_stream(Path(path), text)
        return STREAMED
    if kind == _REGULAR and not force:
        _refuse_read_only(Path(path))
    return _replace_atomically(Path(path), text, kind == _REGULAR, force)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> bool:
    """write_output of a file gpudash rewrites (a profile, remembered results): a regular file or a new path,
    never a stream; True when an existing file was replaced."""
    return write_output(path, text, streams=False) == REPLACED


def is_stdout(path: str | os.PathLike[str]) -> bool:
    """Whether writing to `path` writes to this process's standard output ("-", /dev/stdout, /dev/fd/1...)."""
    try:
        return _classify(path) == _STDOUT
    except GpudashError:
        return False


def check_output(path: str | os.PathLike[str], option: str, *, streams: bool = True, force: bool | None = None) -> None:
    """Fail before minutes of measuring if `path` would be refused later: RefusedOutput (exit code 2, a bad
    argument), one line naming `option`. (A FIFO is not opened here: opening and closing it would end its
    reader's input; one that nothing reads is refused when written.)"""
    force = _FORCE.get() if force is None else force
    try:
        kind = _classify(path, streams)
        if kind == _REGULAR and not force:
            _refuse_read_only(Path(path))
        if kind in (_NEW, _REGULAR):
            folder = _folder_of(Path(path))
            if not os.access(folder, os.W_OK):
                raise RefusedOutput(f"{path}: folder {folder} is not writable")
    except GpudashError as exc:
        raise RefusedOutput(f"{option} {exc}") from None


def _refuse_read_only(target: Path) -> None:
    """A file without any write bit (root may write it all the same) or that this user may not write."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return  # gone meanwhile: a new path
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise RefusedOutput(
            f"{target}: is read-only (mode {mode:04o}); gpudash leaves it as it is: pass --force to replace it"
        )


def _classify(path: str | os.PathLike[str], streams: bool = True) -> str:
    kind = _classify_any(path)
    if not streams and kind in (_STDOUT, _STREAM):
        what = "standard output" if kind == _STDOUT else _describe_stream(Path(path))
        raise RefusedOutput(f"{path}: is {what}; this file is written only as a regular file: name a file")
    return kind


def _describe_stream(target: Path) -> str:
    try:
        st = os.stat(target)
    except OSError:
        return "not a regular file"
    if stat.S_ISFIFO(st.st_mode):
        return "a pipe (FIFO)"
    return f"a character device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)})"


def _classify_any(path: str | os.PathLike[str]) -> str:
    if str(path) == "-":
        return _STDOUT
    target = Path(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        _folder_of(target)  # raises when the folder is missing
        return _NEW
    except OSError as exc:  # ENOTDIR: a component is a file; EACCES; ELOOP
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    if stat.S_ISREG(st.st_mode):
        return _REGULAR
    if stat.S_ISDIR(st.st_mode):
        raise RefusedOutput(f"{target}: is a directory, not a file")
    if stat.S_ISLNK(st.st_mode):
        return _classify_link(target)
    if _is_stream(st):
        return _STREAM
    raise RefusedOutput(
        f"{target}: is {_describe(st)}; gpudash replaces only regular files and streams only to a terminal or pipe"
    )


def _classify_link(link: Path) -> str:
    """A symbolic link is written through only when it leads to a stream (/dev/stdout, /dev/fd/N, a tty)."""
    try:
        st = os.stat(link)
    except OSError:
        st = None
    if st is not None:
        if _is_own_stdout(st):
            return _STDOUT
        if _is_stream(st):
            return _STREAM
    target = os.readlink(link)
    raise RefusedOutput(
        f"{link}: is a symbolic link (to {target}); gpudash does not replace links: name the file itself"
    )


def _is_own_stdout(st: os.stat_result) -> bool:
    try:
        out = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout closed or replaced by an object without a file
        return False
    return (out.st_dev, out.st_ino) == (st.st_dev, st.st_ino)


def _is_stream(st: os.stat_result) -> bool:
    if stat.S_ISFIFO(st.st_mode):
        return True
    return stat.S_ISCHR(st.st_mode) and (_is_terminal_device(st.st_rdev) or _is_dev_null(st.st_rdev))


def _is_terminal_device(rdev: int) -> bool:
    """Decided from the device number, without opening it: opening some devices has effects of its own."""
    number = (os.major(rdev), os.minor(rdev))
    if sys.platform.startswith("linux"):
        return number[0] in _TERMINAL_MAJORS and number != _PTMX
    for fd in (0, 1, 2):  # elsewhere: the terminal gpudash runs in
        try:
            if os.isatty(fd) and os.fstat(fd).st_rdev == rdev:
                return True
        except OSError:
            continue
    return False


def _is_dev_null(rdev: int) -> bool:
    try:
        return os.stat(os.devnull).st_rdev == rdev
    except OSError:
        return False


def _describe(st: os.stat_result) -> str:
    if stat.S_ISCHR(st.st_mode):
        return f"a character device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)}), not a terminal"
    if stat.S_ISBLK(st.st_mode):
        return "a block device"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return "not a regular file"


def _write_stream(target: Path, text: str) -> None:
    """Open without O_CREAT (a path that vanished is not created) and check it is still the stream it was.

    Opened without blocking: a FIFO that nothing reads fails at once (ENXIO) instead of waiting forever; once
    open, the writes block as usual, so a slow reader is waited for."""
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise RefusedOutput(f"{target}: is a pipe (FIFO) that nothing reads; nothing written") from None
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    try:
        os.set_blocking(fd, True)
        if not _is_stream(os.fstat(fd)):
            raise RefusedOutput(f"{target}: changed while gpudash opened it; nothing written")
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
    except OSError as exc:
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    finally:
        os.close(fd)


def _folder_of(target: Path) -> Path:
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise GpudashError(f"{target}: folder {folder} does not exist")
    return folder


def _replace_atomically(target: Path, text: str, existed: bool, force: bool = False) -> str:
    folder = _folder_of(target)
    tmp, fd = _new_temp_file(folder, target.name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if existed:
            _keep_mode_and_owner(tmp, os.lstat(target), target, force)
            _ensure_still_regular(target)
            os.replace(tmp, target)
        else:
            existed = _put_new(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(folder)
    return REPLACED if existed else CREATED


def _new_temp_file(folder: Path, name: str) -> tuple[Path, int]:
    """A new file created with mode 0666, so the kernel applies the umask (mkstemp would give 0600)."""
    import secrets  # here, not at the top: only writers need it, and it costs every start-up a few ms

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise GpudashError(f"{folder / name}: cannot write: {exc.strerror}") from None
    raise GpudashError(f"{folder / name}: cannot write: no free temporary name in {folder}")


def _keep_mode_and_owner(tmp: Path, old: os.stat_result, target: Path, force: bool) -> None:
    """Root replacing a user's file leaves it theirs; anyone else can keep only their own files' owner, and
    replaces someone else's file (which it could write, e.g. mode 0666) only with --force."""
    if not stat.S_ISREG(old.st_mode):
        raise RefusedOutput(f"{target}: stopped being a regular file while gpudash wrote it; not replaced")
    try:
        os.chown(tmp, old.st_uid, old.st_gid)
    except OSError:
        mine = os.stat(tmp)
        if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid) and not force:
            raise RefusedOutput(
                f"{target}: belongs to uid {old.st_uid} gid {old.st_gid}, which gpudash cannot keep; "
                "pass --force to replace it"
            ) from None
    os.chmod(tmp, stat.S_IMODE(old.st_mode))  # after chown, which clears set-user-ID bits


def _ensure_still_regular(target: Path) -> None:
    """The path was a regular file when the write began; refuse if it became something else meanwhile."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise RefusedOutput(f"{target}: stopped being a regular file while gpudash wrote it; not replaced")


def _put_new(tmp: Path, target: Path) -> bool:
    """Move the finished file to a path that was empty; False unless something appeared there meanwhile.

    A hard link fails rather than replace what appeared; where links are not supported, rename after a check.
    """
    try:
        os.link(tmp, target)
    except FileExistsError:
        _ensure_still_regular(target)
        os.replace(tmp, target)
        return True
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        _ensure_still_regular(target)
        os.replace(tmp, target)
        return False
    tmp.unlink()
    return False


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable; not every system lets a folder be opened, so best effort."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The largest file gpudash reads (a snapshot, a profile, a config, remembered results, an export). The biggest
# real ones are a few MiB (a 16-GPU snapshot with minutes of samples); a bound keeps `/dev/zero` or a runaway
# file from being read until the kernel ends gpudash.
MAX_INPUT_BYTES = 64 * 2**20

# Opened without blocking (a FIFO with no writer would otherwise wait forever), never as a controlling terminal.
_INPUT_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def _not_regular(st: os.stat_result, what: str) -> str | None:
    """Why an opened input is refused (a directory, a FIFO, a device, a socket), or None for a regular file."""
    if stat.S_ISDIR(st.st_mode):
        return f"is a directory ({what} expected)"
    if not stat.S_ISREG(st.st_mode):
        return f"is {_describe_input(st)}, not a regular file ({what} expected)"
    return None


def read_user_file(
    path: str | os.PathLike,
    what: str,
    error: type[GpudashError] = GpudashError,
    hint: str = "",
    limit: int | None = None,
) -> str:
    """The text of a file the user named; any problem is one line naming the file and what it was for.

    Only a regular file is read: the path is opened without blocking (a FIFO with no writer would otherwise
    wait forever) and checked with fstat on the open descriptor, so what is read is what was checked. A FIFO,
    a device (/dev/zero, a terminal), a socket or a directory is refused at once; so is a file over `limit`
    bytes (default MAX_INPUT_BYTES), which is never read into memory.
    """
    limit = MAX_INPUT_BYTES if limit is None else limit
    target = Path(path)
    try:
        fd = os.open(target, _INPUT_FLAGS)
    except FileNotFoundError:
        raise error(f"{target}: {what} not found{hint}") from None
    except IsADirectoryError:
        raise error(f"{target}: is a directory ({what} expected)") from None
    except OSError as exc:
        raise error(f"{target}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        refused = _not_regular(st, what)
        if refused:
            raise error(f"{target}: {refused}")
        if st.st_size > limit:
            raise error(f"{target}: {what} is {st.st_size} bytes, more than the {_size(limit)} gpudash reads")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        data = _read_at_most(fd, limit)
    except OSError as exc:
        raise error(f"{target}: cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if data is None:  # it grew past the limit while being read
        raise error(f"{target}: {what} is more than the {_size(limit)} gpudash reads")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{target}: cannot read {what}: not UTF-8 text (byte {exc.start})") from None


def check_input_file(path: str | os.PathLike, option: str, what: str = "file") -> None:
    """UsageError naming `option` unless `path` is a regular file this user may read (a certificate, a CA bundle
    that another library opens later): checked as read_user_file would, without blocking on a FIFO or reading."""
    target = Path(path)
    try:
        fd = os.open(target, _INPUT_FLAGS)
    except FileNotFoundError:
        raise UsageError(f"{option} {target}: no such file ({what} expected)") from None
    except IsADirectoryError:
        raise UsageError(f"{option} {target}: is a directory ({what} expected)") from None
    except OSError as exc:
        raise UsageError(f"{option} {target}: cannot read it: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    refused = _not_regular(st, what)
    if refused:
        raise UsageError(f"{option} {target}: {refused}")


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit} bytes"


def _read_at_most(fd: int, limit: int) -> bytes | None:
    """Everything up to end-of-file, or None when there is more than `limit` bytes."""
    chunks, size = [], 0
    while chunk := os.read(fd, 1 << 20):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _describe_input(st: os.stat_result) -> str:
    if stat.S_ISFIFO(st.st_mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(st.st_mode):
        return f"a character device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)})"
    return _describe(st)
