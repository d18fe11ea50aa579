"""What every command gets: its parsed arguments, and the session its actions share (config, machine)."""

from __future__ import annotations

import argparse
from typing import TypeAlias

from gpudash.actions.session import Session

# What each command module's add_parser(subparsers, parents) receives.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Parents: TypeAlias = "list[argparse.ArgumentParser]"


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.session = Session.load(
            getattr(args, "config", None),
            replay=getattr(args, "replay", None),
            plugin_dirs=getattr(args, "plugins_dir", None) or [],
            only=getattr(args, "only", None),
            only_visible=bool(getattr(args, "only_visible", False)),
            readonly=bool(getattr(args, "readonly", False)),
        )
        self.no_color = bool(getattr(args, "no_color", False))
        self.force_color = bool(getattr(args, "force_color", False))

    def color(self) -> bool:
        """Whether text on stdout may be coloured (gpudash.cli.terminal.use_color)."""
        from gpudash.cli.terminal import use_color

        return use_color(self.no_color, self.force_color)
