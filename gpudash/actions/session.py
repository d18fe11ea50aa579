"""What every action needs: the config, where the machine comes from, the plugin directories, and the
machine itself, discovered once and shared by every action of one command or one dashboard."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpudash.config import load_config
from gpudash.devices import Machine, discover


class Session:
    def __init__(
        self,
        config: dict[str, Any],
        *,
        replay: str | None = None,
        plugin_dirs: Sequence[str] = (),
        machine: Machine | None = None,
        readonly: bool = False,
    ) -> None:
        self.config = config
        self.readonly = readonly  # nothing on the machine is changed (no process is signalled)
        self.replay = replay  # a snapshot file to behave as; None: this machine (or GPUDASH_REPLAY)
        self.extra_plugin_dirs = list(plugin_dirs)  # named by the user for this run, besides the config's
        self._machine = machine

    @classmethod
    def load(
        cls, config_path: str | None = None, *, replay: str | None = None, plugin_dirs: Sequence[str] = ()
    ) -> Session:
        """A session with the config file at `config_path` (default: the user's, then the built-ins)."""
        return cls(load_config(config_path), replay=replay, plugin_dirs=plugin_dirs)

    @property
    def plugin_dirs(self) -> list[str]:
        """Where one-file plugins are looked for: the directories named for this run, then the config's."""
        return self.extra_plugin_dirs + list(self.config["plugin_dirs"])

    def machine(self, include_torch: bool = True) -> Machine:
        """The machine, discovered on first use (`include_torch` counts only then: torch's view is slow)."""
        if self._machine is None:
            self._machine = discover(replay=self.replay, include_torch=include_torch)
        return self._machine
