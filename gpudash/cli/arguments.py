"""Argument checks the commands share, each failing as a one-line UsageError naming the option."""

from __future__ import annotations

from gpudash.errors import UsageError


def positive_seconds(value: float | None, option: str, default: float) -> float:
    """`value` when given (it must be above zero), else `default` (the config's, validated there)."""
    if value is None:
        return default
    if not value > 0:
        raise UsageError(f"{option}: expected a positive number of seconds, got {value}")
    return value
