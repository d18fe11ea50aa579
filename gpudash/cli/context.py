"""What every command needs: parsed args, the loaded config, and the machine (discovered once)."""

from __future__ import annotations

import argparse
from typing import Any

from gpudash.config import load_config
from gpudash.devices import Machine, discover


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.config: dict[str, Any] = load_config(getattr(args, "config", None))
        self._machine: Machine | None = None

    @property
    def replay(self) -> str | None:
        return getattr(self.args, "replay", None)

    @property
    def plugin_dirs(self) -> list[str]:
        return list(getattr(self.args, "plugins_dir", None) or []) + list(self.config["plugin_dirs"])

    def machine(self, include_torch: bool = True) -> Machine:
        if self._machine is None:
            self._machine = discover(replay=self.replay, include_torch=include_torch)
        return self._machine
