"""A benchmark's progress on a text stream (stderr for the CLI, so stdout stays clean for --json)."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class Progress:
    """A one-line bar on a terminal; on a pipe, one line per finished task (nothing on stdout)."""

    WIDTH = 24

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self.drawn = False

    def __call__(self, event: dict[str, Any]) -> None:
        done, total = event["done"], max(event["total"], 1)
        what = " ".join(str(x) for x in (event["device"], event.get("precision") or event["kind"]) if x)
        if self.tty:
            filled = int(self.WIDTH * done / total)
            shape = event.get("shape")
            detail = f" {'x'.join(map(str, shape))}" if shape else ""
            line = (
                f"\rbench [{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} "
                f"{time.monotonic() - self.started:4.0f} s  {what}{detail}"
            )
            self.stream.write(line.ljust(78)[:100])
            self.stream.flush()
            self.drawn = True
        elif event.get("status"):
            self.stream.write(
                f"gpudash: [{done}/{total}] {what}: {event['status']} ({time.monotonic() - self.started:.1f} s)\n"
            )
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line, so the next message starts on its own (harmless when called again)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
