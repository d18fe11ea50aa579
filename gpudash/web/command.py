"""The command each browser session runs: `gpudash tui` with the global options `gpudash web` was given."""

from __future__ import annotations

import argparse
import shlex
import sys


def options_as_argv(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[str]:
    """Write back, as command-line words, every option of `parser` that is set in `args`.

    Generic over the parser's actions, so a global option added later (e.g. for a fleet) is passed on
    to every session without a change here.
    """
    words: list[str] = []
    for action in parser._actions:  # argparse offers no public way to list a parser's options
        if not action.option_strings:
            continue
        value = getattr(args, action.dest, None)
        if value is None or value is argparse.SUPPRESS:
            continue
        flag = max(action.option_strings, key=len)  # the long spelling reads best in `ps`
        if action.nargs == 0:  # a flag: store_true, store_false, store_const
            if value == action.const:
                words.append(flag)
        elif action.nargs is None and isinstance(value, list):  # action="append": one flag per item
            words += [f"{flag}={item}" for item in value]  # `=`: a value may start with '-'
        elif isinstance(value, list):  # nargs="*", "+" or a number: one flag, several words
            words += [flag, *map(str, value)]
        else:
            words.append(f"{flag}={value}")
    return words


def session_command(options: list[str], server_pid: int) -> str:
    """A shell command line (textual-serve runs one through the shell) for `gpudash tui` with `options`.

    `exec` makes the session's process the app itself rather than a shell around it, so ending it ends
    the app; gpudash.web.session ties its life to the server's before it becomes `gpudash tui`.
    """
    argv = [sys.executable, "-m", "gpudash.web.session", str(server_pid), *options]
    return "exec " + " ".join(shlex.quote(word) for word in argv)
