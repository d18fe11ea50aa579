"""argparse's errors as one line with a "did you mean" suggestion, exit code 2.

argparse prints its usage (four lines here) and then the error; the README promises one line. The line names
what was wrong in the user's words and, where something close exists, what was probably meant (difflib), so
`gpudash info --jsn` says `did you mean --json?` and `gpudash snapshot -0 x.json` says that `-o` is missing and
`-0` was probably it.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import NoReturn

from gpudash.errors import EXIT_USAGE


def close_to(word: str, candidates: list[str]) -> str | None:
    """The candidate `word` was most probably meant to be, or None when nothing is close enough."""
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not found and word.startswith("-"):  # `--jsn` against `--json`: compare without the dashes too
        bare = {c.lstrip("-"): c for c in candidates}
        found = [bare[m] for m in difflib.get_close_matches(word.lstrip("-"), list(bare), n=1, cutoff=0.6)]
    return found[0] if found else None


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for s in parser._option_string_actions if s not in ("-h",)]


def subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    """The parser of subcommand `name` under `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name:
            found = action.choices.get(name)
            return found if isinstance(found, argparse.ArgumentParser) else None
    return None


def commands(parser: argparse.ArgumentParser) -> list[str]:
    return [name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]


def _did_you_mean(word: str, candidates: list[str]) -> str:
    meant = close_to(word, candidates)
    return f" (did you mean {meant}?)" if meant else ""


def unknown_arguments(parser: argparse.ArgumentParser, words: list[str]) -> str:
    """The message for arguments no parser took; `parser` is the (sub)command they were given to."""
    options = option_strings(parser)
    first = words[0]
    typed = first.split("=", 1)[0] if first.startswith("--") else first
    where = f"`{parser.prog}`"
    others = f" (and {len(words) - 1} more)" if len(words) > 1 else ""
    if typed.startswith("-") and len(typed) > 1:
        return f"unknown option {typed} for {where}{others}{_did_you_mean(typed, options)}; see {parser.prog} --help"
    return f"unexpected argument {first!r} for {where}{others}; see {parser.prog} --help"


_CHOICE = re.compile(r"argument (?P<name>[^:]+): invalid choice: (?P<value>'.*?'|\".*?\") \(choose from (?P<of>.*)\)$")
_REQUIRED = re.compile(r"the following arguments are required: (?P<names>.*)$")


def rewrite(parser: argparse.ArgumentParser, message: str, typed: list[str]) -> str:
    """argparse's `message` from `parser`, rewritten with a suggestion where one helps."""
    choice = _CHOICE.match(message)
    if choice:
        value = choice["value"][1:-1]
        allowed = re.findall(r"'([^']*)'", choice["of"])
        if choice["name"] == "COMMAND":
            meant = close_to(value, allowed)
            hint = f"did you mean {meant}?" if meant else "commands: " + ", ".join(allowed)
            return f"unknown command {value!r} ({hint}); see gpudash --help"
        meant = close_to(value, allowed)
        hint = f"did you mean {meant}? " if meant else ""
        return f"{choice['name']}: invalid choice {value!r} ({hint}choose from {', '.join(allowed)})"
    required = _REQUIRED.match(message)
    if required:
        names = [n.strip() for n in required["names"].split(",")]
        shown = []
        known = set(option_strings(parser))
        strays = [w.split("=", 1)[0] for w in typed if w.startswith("-") and w.split("=", 1)[0] not in known]
        hint = ""
        for name in names:
            spellings = name.split("/")
            action = parser._option_string_actions.get(spellings[0])
            metavar = f" {action.metavar or action.dest.upper()}" if action and action.nargs != 0 else ""
            shown.append(f"{spellings[0]}{metavar}")
            for stray in strays:
                short = len(stray) == 2 and any(len(s) == 2 for s in spellings)  # `-0` for `-o`: too short for difflib
                if not hint and (short or close_to(stray, spellings)):
                    hint = f"; did you mean {spellings[0]} where you typed {stray}?"
        return f"`{parser.prog}` needs {', '.join(shown)}{hint or ''} (see {parser.prog} --help)"
    return message


def fail(message: str) -> NoReturn:
    from gpudash.plain_text import one_line

    print(f"gpudash: error: {one_line(message, 2000)}", file=sys.stderr)  # what was typed, shown safely
    raise SystemExit(EXIT_USAGE)
