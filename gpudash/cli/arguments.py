"""What the commands share: argument checks, each failing as a one-line UsageError naming the option, and
the one-line messages on stderr."""

from __future__ import annotations

import sys

from gpudash.errors import UsageError


def positive_seconds(value: float | None, option: str, default: float) -> float:
    """`value` when given (it must be above zero), else `default` (the config's, validated there)."""
    if value is None:
        return default
    if not value > 0:
        raise UsageError(f"{option}: expected a positive number of seconds, got {value}")
    return value


def precision_list(text: str | None, option: str = "--precisions") -> list[str] | None:
    """A comma-separated list of precisions without repeats, or None for the default."""
    from gpudash.precisions import PRECISIONS

    if text is None:
        return None
    names = [p.strip().lower() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError(f"{option}: expected a comma-separated list, e.g. fp32,bf16")
    unknown = [p for p in names if p not in PRECISIONS]
    if unknown:
        raise UsageError(f"{option}: unknown precision '{unknown[0]}' (choose from {', '.join(PRECISIONS)})")
    return list(dict.fromkeys(names))


def say(message: str) -> None:
    """One line for the user on stderr, so stdout stays clean for the data; what came from outside (a file
    name, a device name) shown safely."""
    from gpudash.plain_text import one_line

    print(f"gpudash: {one_line(message, 4000)}", file=sys.stderr, flush=True)


def plugin_error(plugin: str, message: str) -> None:
    """A plugin that failed to load or register: one line on stderr naming it, the command goes on."""
    say(f"plugin {plugin!r}: {message}")
