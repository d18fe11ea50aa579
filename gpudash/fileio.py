"""Writing files so that a crash or a full disk never leaves half a file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gpudash.errors import GpudashError


def atomic_write_text(path: str | os.PathLike, text: str) -> bool:
    """Write via a temp file in the same folder and rename over the target.

    Returns True when an existing file was replaced, so callers can say so.
    """
    target = Path(path)
    if target.is_dir():
        raise GpudashError(f"{target}: is a directory, not a file")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise GpudashError(f"{target}: folder {folder} does not exist")
    existed = target.exists()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if existed:  # keep the user's permissions on the file we replace
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise GpudashError(f"{target}: cannot write: {exc.strerror}") from None
    return existed


def read_user_file(path: str | os.PathLike, what: str, error: type[GpudashError] = GpudashError, hint: str = "") -> str:
    """The text of a file the user named; any problem is one line naming the file and what it was for."""
    target = Path(path)
    try:
        return target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{target}: {what} not found{hint}") from None
    except IsADirectoryError:
        raise error(f"{target}: is a directory ({what} expected)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{target}: cannot read {what}: {getattr(exc, 'strerror', None) or exc}") from None
