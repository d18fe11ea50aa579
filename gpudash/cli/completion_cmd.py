"""`gpudash completion bash|zsh|fish`: print a shell completion script made from gpudash's own options."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash.cli import exit_codes

if TYPE_CHECKING:
    from gpudash.cli.context import Context, Parents, Subparsers

SHELLS = ("bash", "zsh", "fish")  # gpudash.cli.completion_scripts.SHELLS, without importing it for --help


def add_parser(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "completion",
        parents=parents,
        help="print a shell completion script (bash, zsh, fish)",
        description="Print a completion script for SHELL, made from gpudash's own commands and options. "
        "bash: `source <(gpudash completion bash)` in ~/.bashrc; "
        "zsh: `gpudash completion zsh > ~/.zfunc/_gpudash` with ~/.zfunc in $fpath (or `source <(gpudash "
        "completion zsh)` after compinit); fish: `gpudash completion fish > ~/.config/fish/completions/gpudash.fish`.",
        epilog=exit_codes.epilog("completion"),
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(func=run)


def run(ctx: Context) -> int:
    from gpudash.cli import build_parser
    from gpudash.cli.completion_scripts import script

    print(script(ctx.args.shell, build_parser()), end="")
    return 0
