"""The name of the binding call in progress, kept where the parent can read it even when the child hangs."""

from __future__ import annotations

import mmap
from typing import Any

NAME_BYTES = 256


class CallNote:
    """A page of memory shared by parent and child (anonymous and shared, so a fork keeps it shared)."""

    def __init__(self) -> None:
        self._page = mmap.mmap(-1, NAME_BYTES)

    def write(self, name: str) -> None:
        data = name.encode("ascii", "replace")[: NAME_BYTES - 1]
        self._page[: len(data) + 1] = data + b"\0"

    def clear(self) -> None:
        self._page[:1] = b"\0"

    def read(self) -> str:
        raw = self._page[:NAME_BYTES]
        return raw.split(b"\0", 1)[0].decode("ascii", "replace")

    def close(self) -> None:
        self._page.close()


class TracedBinding:
    """Stands for a binding module (pynvml, amdsmi): each function called through it is noted first.

    Constants, classes and exception types pass through unchanged, so the adapters' `except` clauses and
    ctypes structures work as with the module itself."""

    def __init__(self, module: Any, note: CallNote) -> None:
        self._module = module
        self._note = note
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if not callable(value) or isinstance(value, type):
            return value
        cached = self._wrapped.get(name)
        if cached is not None and cached[0] is value:
            return cached[1]
        note = self._note

        def call(*args: Any, **kwargs: Any) -> Any:
            note.write(name)
            return value(*args, **kwargs)

        self._wrapped[name] = (value, call)
        return call
