"""Rules every option value keeps, whatever the command: nothing given is silently dropped or taken as a number
it is not. An empty value (`--device ""`, `--preset ""`, `--save ""`) would otherwise read as "not given" and
fall back to the default; `nan` and `inf` parse as floats but are no number of seconds."""

from __future__ import annotations

import argparse
import math

from gpudash.errors import UsageError

# Options whose own check says more about an empty value ("write '.' for the working directory").
_CHECKED_ELSEWHERE = frozenset({"plugins_dir"})


def _option(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def check_option_values(args: argparse.Namespace) -> None:
    """UsageError naming the first option given an empty value or a number that is not finite."""
    for dest, value in vars(args).items():
        if callable(value) or dest in _CHECKED_ELSEWHERE:  # the command's function; see above
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and not item.strip():
                raise UsageError(f"{_option(dest)}: expected a value, got an empty one")
            if isinstance(item, float) and not math.isfinite(item):
                raise UsageError(f"{_option(dest)}: expected a finite number, got {item}")
