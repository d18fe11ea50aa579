"""Standard output that fails with one line: a full disk (/dev/full, a quota) or an I/O error while printing
is a GpudashError naming standard output, not a traceback, and the exit flush does not fail a second time."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from gpudash.errors import GpudashError


class OutputFailed(GpudashError):
    """Standard output could not take what gpudash printed: exit code 3, like any command that could not do its job."""


class _Guarded:
    """sys.stdout as it was, with write and flush errors turned into OutputFailed (a reader that left, a
    BrokenPipeError, stays what it is: the command line treats it as the end of the output)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(self._stream, exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _failed(self._stream, exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _failed(stream: TextIO, exc: OSError) -> OutputFailed:
    """Point the descriptor at /dev/null, so what is still buffered goes nowhere at exit instead of failing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return OutputFailed(f"cannot write to standard output: {exc.strerror or exc}")


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """sys.stdout guarded for the time of one command, then flushed and put back."""
    original = sys.stdout
    guard = _Guarded(original)
    sys.stdout = guard  # type: ignore[assignment,unused-ignore]
    try:
        yield
        guard.flush()
    finally:
        if sys.stdout is guard:
            sys.stdout = original
