"""The `gpudash` command line: argparse only, each subcommand in its own module, imported lazily.

`gpudash` alone opens the dashboard on a terminal, and prints `gpudash info` once when stdout is not one;
every other command is headless and never imports Textual. Exit codes: gpudash.errors.EXIT_CODES.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from gpudash import __version__
from gpudash.errors import EXIT_CODES, EXIT_INTERRUPTED, EXIT_OK, GpudashError

# Subcommand name -> module under gpudash.cli defining `add_parser(subparsers, parents)` and `run(ctx)`.
COMMANDS = {
    "info": "info_cmd",
    "probe": "probe_cmd",
    "bench": "bench_cmd",
    "check": "check_cmd",
    "export": "export_cmd",
    "snapshot": "snapshot_cmd",
    "plugins": "plugins_cmd",
    "serve": "serve_cmd",
    "fleet": "fleet_cmd",
    "preflight": "preflight_cmd",
    "tui": "tui_cmd",
    "web": "web_cmd",
    "completion": "completion_cmd",
}

EXAMPLES = """examples:
  gpudash                                   the live dashboard
  gpudash info --json                       devices and their native precisions, as JSON
  gpudash probe                             which precisions really run, and how exactly
  gpudash export -o gpudash.toml            training settings, each with its reason
  gpudash --replay examples/snapshots/h100-80gb.json    any command on a recorded machine
  gpudash info --watch                      redraw the device table every second (Ctrl-C stops)
  gpudash --only 0,1 info                   GPUs 0 and 1 only (--only-visible: CUDA/HIP/ROCR_VISIBLE_DEVICES)
"""


def exit_code_text() -> str:
    """The exit-code table for --help (docs/cli.md has the same rows)."""
    return "exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES)


# Options accepted before or after the subcommand (`gpudash --replay F info` == `gpudash info --replay F`): each
# one's flags and argparse keywords, its default None (absent), as `gpudash` alone leaves them (bare_args()).
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--replay",), {"metavar": "FILE", "help": "behave as on the machine recorded in FILE (also GPUDASH_REPLAY)"}),
    (("--config",), {"metavar": "PATH", "help": "config file (default: user config, then built-ins)"}),
    (
        ("--plugins-dir",),
        {"metavar": "DIR", "action": "append", "help": "also load one-file plugins from DIR (repeatable)"},
    ),
    (
        ("--only",),
        {
            "metavar": "IDX[,IDX]",
            "action": "append",
            "help": "work on these devices only: GPU indices or keys as `gpudash info` shows them (cpu:0 for the "
            "CPU, which --only hides unless named); repeatable",
        },
    ),
    (
        ("--only-visible",),
        {
            "action": "store_true",
            "help": "only the GPUs CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES leave visible, "
            "as a program started here would see them (without it every GPU is shown, as nvitop does)",
        },
    ),
    (
        ("--readonly",),
        {
            "action": "store_true",
            "help": "the dashboard never signals a process (its T and K keys are off), in the terminal and in every "
            "`gpudash web` session",
        },
    ),
    (
        ("--no-color",),
        {
            "action": "store_true",
            "help": "no colour in the output (also NO_COLOR=1); colour is used only on a terminal anyway",
        },
    ),
    (
        ("--force-color", "--color"),
        {"action": "store_true", "help": "colour even when stdout is not a terminal (for `watch --color`, `less -R`)"},
    ),
)


def _global_options(suppress: bool) -> argparse.ArgumentParser:
    """The global options (GLOBAL_OPTIONS) as a parent parser: the top level's (default None) or each
    subcommand's (`suppress`: absent unless given there, so a value given before the command stays)."""
    default = argparse.SUPPRESS if suppress else None
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("global options")
    for flags, keywords in GLOBAL_OPTIONS:
        group.add_argument(*flags, default=default, **keywords)
    return parent


def bare_args() -> argparse.Namespace:
    """What build_parser() parses from no words at all (`gpudash`, the dashboard), without building it: every
    global option None, no command."""
    return argparse.Namespace(**{flags[0][2:].replace("-", "_"): None for flags, _ in GLOBAL_OPTIONS}, command=None)


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line with a "did you mean" suggestion, exit 2
    (gpudash.cli.usage_errors), showing what was typed safely (an escape sequence given as an argument is echoed
    as its escape, not sent to the terminal). Subcommands' parsers are of this class too."""

    typed: list[str] = []  # the words being parsed, for a suggestion when a required option is missing

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        _Parser.typed = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(_Parser.typed, namespace)
        if extras:  # the subcommand's parser hands what it did not take up to here: suggest from its options
            from gpudash.cli import usage_errors

            usage_errors.fail(
                usage_errors.unknown_arguments(
                    usage_errors.subparser(self, getattr(parsed, "command", None)) or self, extras
                )
            )
        return parsed

    def format_help(self) -> str:
        for action in self._actions:  # the command list needs every command's help line
            if isinstance(action.choices, _LazyParsers):
                action.choices.build_all()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        from gpudash.cli import usage_errors

        usage_errors.fail(usage_errors.rewrite(self, message, _Parser.typed))


class _LazyParsers(dict[str, Any]):
    """The subcommands' parsers, each built (its module imported, its options added) when first asked for.

    Every name is a key from the start, in COMMANDS order, so argparse's checks and messages ("invalid choice",
    the suggestions of gpudash.cli.usage_errors) see every command; `gpudash info` builds info's parser only,
    `gpudash` alone none (the dashboard starts sooner). The top-level help builds them all (_Parser.format_help)."""

    def __init__(self, subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
        super().__init__(dict.fromkeys(COMMANDS))
        self._subparsers, self._parents = subparsers, parents

    def _build(self, name: str) -> argparse.ArgumentParser:
        built = dict.get(self, name)
        if built is None:
            names = list(self)
            dict.__delitem__(self, name)  # argparse refuses to add a name it already has
            importlib.import_module(f"gpudash.cli.{COMMANDS[name]}").add_parser(self._subparsers, self._parents)
            entries = {k: dict.get(self, k) for k in names} | dict(dict.items(self))
            dict.clear(self)  # back in COMMANDS order, as when every parser is built at once
            dict.update(self, entries)
            self._subparsers._choices_actions.sort(key=lambda a: names.index(a.dest) if a.dest in names else 0)
            built = entries[name]
        return cast(argparse.ArgumentParser, built)

    def build_all(self) -> None:
        for name in list(self):
            self._build(name)

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        if name not in self:
            raise KeyError(name)
        return self._build(name)

    def get(self, name: str, default: Any = None) -> Any:
        return self._build(name) if name in self else default

    def values(self) -> Any:
        self.build_all()
        return dict.values(self)

    def items(self) -> Any:
        self.build_all()
        return dict.items(self)


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """gpudash's parser. `lazy`: each subcommand's parser is built when the words name it (main() parses so);
    otherwise all of them now (completion scripts and tests walk every one)."""
    parser = _Parser(
        prog="gpudash",
        description="See the accelerators on this machine, which precisions really work, and how fast. "
        "With no command, opens the live dashboard.",
        parents=[_global_options(suppress=False)],
        epilog=EXAMPLES + "\n" + exit_code_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gpudash {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    parents = [_global_options(suppress=True)]
    if lazy:
        subparsers._name_parser_map = subparsers.choices = _LazyParsers(subparsers, parents)
    else:
        for module in COMMANDS.values():
            importlib.import_module(f"gpudash.cli.{module}").add_parser(subparsers, parents)
    return parser


def main(argv: list[str] | None = None) -> int:
    from gpudash import lifetime

    lifetime.starting()  # until the dashboard's first frame (GpudashApp._settle), or the words of another command
    lifetime.install_exit_handlers()  # SIGTERM/SIGHUP: one line, exit 143/129, every child process group killed
    words = list(sys.argv[1:] if argv is None else argv)
    # `gpudash` alone (the dashboard, the common case) needs no parser: its words are none, so its options are
    # the defaults. Any word (an option, a command, a typo) goes through the parser, errors and help included.
    args = build_parser(lazy=True).parse_args(words) if words else bare_args()
    if args.command in (None, "tui"):
        from gpudash.cli.terminal import is_terminal

        # A Textual driver named in the environment draws elsewhere: textual-serve's web driver (gpudash web)
        if is_terminal() or (args.command == "tui" and os.environ.get("TEXTUAL_DRIVER")):
            args.command = "tui"
            args.func = importlib.import_module("gpudash.cli.tui_cmd").run
        else:  # a pipe or a file: the dashboard would write escape codes there and never end
            print(
                "gpudash: stdout is not a terminal: printing `gpudash info` (the dashboard needs one)",
                file=sys.stderr,
            )
            info = build_parser(lazy=True).parse_args(["info"])  # info's defaults, then the global options given
            info.__dict__.update({k: v for k, v in vars(args).items() if k not in ("command", "func")})
            args = info
    if args.command != "tui":
        lifetime.started()
    if getattr(args, "no_color", False):
        os.environ["NO_COLOR"] = "1"  # the dashboard (Textual) and child processes follow it too
    from gpudash.cli import needs_torch
    from gpudash.cli.context import Context
    from gpudash.cli.option_values import check_option_values
    from gpudash.cli.output import guarded_stdout
    from gpudash.fileio import forcing

    try:
        check_option_values(args)
        ctx = Context(args)
        needs_torch.check(args, ctx.session.config)  # the light install: one line and exit 3, before any work
        if args.command == "tui":  # the dashboard draws on the terminal itself
            return int(args.func(ctx) or EXIT_OK)
        # --force reaches every writer of the command (its output, profiles, the state store): gpudash.fileio
        with guarded_stdout(), forcing(bool(getattr(args, "force", False))):
            return int(args.func(ctx) or EXIT_OK)
    except GpudashError as exc:
        from gpudash.plain_text import one_line

        print(f"gpudash: error: {one_line(exc, 4000)}", file=sys.stderr)  # what the user typed, shown safely
        return exc.exit_code
    except KeyboardInterrupt:
        print("gpudash: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `gpudash info | head`: the reader left; that is not an error
        sys.stderr.close()
        return EXIT_OK
