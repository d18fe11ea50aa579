"""What every action needs: the config, where the machine comes from, the plugin directories, which of its
devices to work on, and the machine itself, discovered once and shared by every action of one command or one
dashboard."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpudash.config import load_config
from gpudash.devices import Discovery, Machine, begin_discovery


class Session:
    def __init__(
        self,
        config: dict[str, Any],
        *,
        replay: str | None = None,
        plugin_dirs: Sequence[str] = (),
        machine: Machine | None = None,
        only: Sequence[str] | None = None,
        only_visible: bool = False,
        readonly: bool = False,
    ) -> None:
        self.config = config
        self.readonly = readonly  # nothing on the machine is changed (no process is signalled)
        self.replay = replay  # a snapshot file to behave as; None: this machine (or GPUDASH_REPLAY)
        self.extra_plugin_dirs = list(plugin_dirs)  # named by the user for this run, besides the config's
        # The device filter of every face (`--only`, `--only-visible`), applied once the machine is discovered:
        # what is filtered out is never sampled or shown (gpudash.devices.selection.select).
        self.only = list(only) if only else None
        self.only_visible = only_visible
        self._machine = machine
        self._discovery: Discovery | None = None  # begun by start_machine(), read by machine()

    @classmethod
    def load(
        cls,
        config_path: str | None = None,
        *,
        replay: str | None = None,
        plugin_dirs: Sequence[str] = (),
        only: Sequence[str] | None = None,
        only_visible: bool = False,
        readonly: bool = False,
    ) -> Session:
        """A session with the config file at `config_path` (default: the user's, then the built-ins)."""
        return cls(
            load_config(config_path),
            replay=replay,
            plugin_dirs=plugin_dirs,
            only=only,
            only_visible=only_visible,
            readonly=readonly,
        )

    @property
    def plugin_dirs(self) -> list[str]:
        """Where one-file plugins are looked for: the directories named for this run, then the config's."""
        return self.extra_plugin_dirs + list(self.config["plugin_dirs"])

    def start_machine(self, read_ahead: tuple[str, ...] = ()) -> None:
        """Begin discovering the machine now: the drivers' children open their libraries while the caller
        goes on importing (the dashboard, Textual); machine() then reads what they found. `read_ahead`
        ("sample", "health"): each child also reads those for every device meanwhile (gpudash info)."""
        if self._machine is None and self._discovery is None:
            self._discovery = begin_discovery(self.replay, read_ahead)

    def machine(self, include_torch: bool = True) -> Machine:
        """The machine, discovered on first use (`include_torch` counts only then: torch's view is slow), with
        the session's device filter applied (a UsageError names a device the filter asks for and lacks)."""
        if self._machine is None:
            discovery, self._discovery = self._discovery or begin_discovery(self.replay), None
            machine = discovery.machine(include_torch)
            try:
                from gpudash.devices.selection import select

                select(machine, self.only, self.only_visible)
            except BaseException:
                machine.close()
                raise
            self._machine = machine
        return self._machine
