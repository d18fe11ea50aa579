"""What the commands share: argument checks, each failing as a one-line UsageError naming the option, the
`--device` and `--precisions` options spelled and explained the same way everywhere, and the one-line messages
on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from gpudash.errors import UsageError

# The forms --device takes, said the same way by every command (gpudash.devices.selection.DEVICE_FORMS).
DEVICE_FORMS = "a key as `gpudash info` shows it (cpu:0, nvidia:1, amd:0), cpu, cuda:N, or a GPU index N"


def add_device_option(parser: argparse.ArgumentParser, what: str, *, repeatable: bool, default: str) -> None:
    """`--device` as every command takes it: `what` the command does with it, `default` without it."""
    more = "; repeatable, or a comma list" if repeatable else ""
    parser.add_argument(
        "--device",
        metavar="DEVICE",
        action="append" if repeatable else "store",
        help=f"{what}: {DEVICE_FORMS}{more} (default: {default})",
    )


class OutputPath(argparse._StoreAction):
    """An option naming a file gpudash writes. The marker lets tests find every writer from the parser itself
    (tests/test_safe_writers.py walks each through links, devices, FIFOs, folders, read-only files and a full
    disk); `streams` says whether `-`, a terminal or a pipe is accepted (gpudash.fileio.write_output)."""

    streams = True


class RewrittenPath(OutputPath):
    """A file gpudash rewrites for another program to read (a profile, a textfile): only ever a regular file."""

    streams = False


class ForceOption(argparse._StoreTrueAction):
    """`--force`; `state` marks a command that also remembers results under the state folder."""

    state = False


class ForceWithState(ForceOption):
    state = True


def add_output_option(parser: argparse.ArgumentParser, *flags: str, rewritten: bool = False, **kwargs) -> None:
    """An option naming a file to write, marked (see OutputPath); the command adds add_force_option too."""
    parser.add_argument(*flags, action=RewrittenPath if rewritten else OutputPath, **kwargs)


def add_force_option(parser: argparse.ArgumentParser, *, state: bool = False) -> None:
    """`--force`, once per command that writes a file: replace a read-only one (gpudash.fileio). `state`: the
    command also remembers its results, where a read-only file is likewise kept unless --force is given."""
    parser.add_argument(
        "--force",
        action=ForceWithState if state else ForceOption,
        help="replace a file it writes even when that file is read-only (e.g. mode 0444), keeping its mode and "
        "owner; links, devices, pipes and folders are never replaced",
    )


def add_precisions_option(
    parser: argparse.ArgumentParser, what: str, default: str, *, old_spelling: bool = False
) -> None:
    """`--precisions LIST`; with `old_spelling`, also the hidden `--precision NAME` of earlier releases (read
    together by chosen_precisions, with a warning)."""
    parser.add_argument(
        "--precisions",
        metavar="LIST",
        action="append",
        help=f"{what} only these precisions, comma-separated, e.g. fp32,bf16,int8; repeatable (default: {default})",
    )
    if old_spelling:
        parser.add_argument("--precision", metavar="NAME", action="append", help=argparse.SUPPRESS)


def chosen_precisions(args: argparse.Namespace) -> list[str] | None:
    """The precisions `--precisions` (and the old `--precision`, said to be deprecated) ask for; None: all."""
    old = getattr(args, "precision", None) or []
    wanted = (args.precisions or []) + old
    chosen = precision_list(wanted, "--precisions" if args.precisions else "--precision") if wanted else None
    if old:
        say("warning: --precision is deprecated; use --precisions " + ",".join(old))
    return chosen


def positive_seconds(value: float | None, option: str, default: float) -> float:
    """`value` when given (it must be above zero), else `default` (the config's, validated there)."""
    if value is None:
        return default
    if not value > 0:
        raise UsageError(f"{option}: expected a positive number of seconds, got {value}")
    return value


def precision_list(text: str | Iterable[str] | None, option: str = "--precisions") -> list[str] | None:
    """A comma-separated list of precisions (or several such lists) without repeats, or None for the default."""
    from gpudash.precisions import PRECISIONS

    if text is None:
        return None
    parts = [text] if isinstance(text, str) else list(text)
    given = [p.strip() for part in parts for p in part.split(",") if p.strip()]
    if not given:
        raise UsageError(f"{option}: expected a comma-separated list, e.g. fp32,bf16")
    unknown = [p for p in given if p.lower() not in PRECISIONS]
    if unknown:  # named as the user typed it (shown safely by the one-line error)
        raise UsageError(f"{option}: unknown precision '{unknown[0]}' (choose from {', '.join(PRECISIONS)})")
    return list(dict.fromkeys(p.lower() for p in given))


def say(message: str) -> None:
    """One line for the user on stderr, so stdout stays clean for the data; what came from outside (a file
    name, a device name) shown safely."""
    from gpudash.plain_text import one_line

    print(f"gpudash: {one_line(message, 4000)}", file=sys.stderr, flush=True)


def plugin_error(plugin: str, message: str) -> None:
    """A plugin that failed to load or register: one line on stderr naming it, the command goes on."""
    say(f"plugin {plugin!r}: {message}")
