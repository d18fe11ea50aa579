"""The dashboard's footer: Textual's Footer, built once the first frame is drawn, then at most once a refresh.

Textual's Footer rebuilds all of its keys (17 on the dashboard, each styled three times as it mounts: its own
rules, then its compact class set and unset) on every change of the screen's bindings. At start-up the screen's
resume, its first focus, the dashboard's focus and the tabs each changed them, so the keys were built four
times before the first frame: about 660 of the 856 style applications up to it (counted in process, headless
at 140x45 on the fake 8-GPU NVML). This footer ignores the changes until `settle()`, which the app calls once
the first reading is on the screen, and folds the changes of one refresh into one rebuild.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Footer


class SettledFooter(Footer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settled = False
        self._rebuild_pending = False
        self.builds = 0  # rebuilds asked of Textual's footer (the tests count them)

    def settle(self) -> None:
        """Show the keys from now on (the bindings of the first screen have stopped changing). Callable from
        the app: the rebuild runs in the footer's own message loop, where Textual's footer binds its keys."""
        if not self.settled and self.is_attached:
            self.call_later(self._settle)

    def _settle(self) -> None:
        if not self.settled:
            self.settled = True
            self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Any) -> None:
        if not self.settled or self._rebuild_pending:
            return
        self._rebuild_pending = True
        self.call_after_refresh(self._rebuild, screen)

    def _rebuild(self, screen: Any) -> None:
        self.builds += 1
        super().bindings_changed(screen)  # Textual's: marks the bindings ready, recomposes after the next refresh

    async def recompose(self) -> None:
        self._rebuild_pending = False  # changes until now are in this build; later ones ask for another
        await super().recompose()
