"""The dashboard's views, one tab each, in the order they appear.

Adding a view takes one new module and one line here:

1. Write `gpudash/tui/screens/<name>.py` with a widget (usually a container) whose constructor takes
   the app. It reads what it needs from the app:

   - `self.app.session`  what the actions (gpudash.actions) take: config, plugin directories, the machine
   - `self.app.machine`  the Machine (devices, `label`, `replayed`, `runtime`, `notes`)
   - `self.app.config`   the loaded config dict (`config["ui"]["refresh_interval"]`, ...)
   - `self.app.history`  recent readings per device (gpudash.history.History)
   - `self.app.latest`   the newest {device.key: Sample}

   and, to stay live, subscribes in `on_mount` to the app's signals:
   `self.app.samples_applied.subscribe(self, callback)` (after every poll) and
   `self.app.machine_changed.subscribe(self, callback)` (after torch's view was merged in).
   Ask an action for data (e.g. `gpudash.actions.bench.run(self.app.session, plan, ...)`) and draw it,
   with gpudash.render for text the CLI shows too; never import gpudash.cli. Never import torch at module
   level; call actions that run anything from a thread worker.

   Keys: the view's own BINDINGS (they are listed on the `?` screen). When the tab is shown the app calls
   the view's `focus_main()` if it has one, else focuses its first table, so those keys work at once.

2. Add a line to VIEWS, e.g.
   `ViewSpec("bench", "Benchmarks", "b", "gpudash.tui.screens.benchmarks:BenchmarksView", "throughput per precision"),`

The factory path is imported when the view is first shown, not at start-up, so a view with heavy imports
does not delay the first frame. The key becomes a footer binding and is listed on the `?` help screen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Union

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

Factory = Union[str, Callable[["App"], "Widget"]]  # noqa: UP007 (a runtime alias: `|` fails on strings)


class ViewSpec(NamedTuple):
    id: str  # also the tab pane id, as "view-<id>"
    title: str  # the tab label and the footer text
    key: str  # the key that shows this view
    factory: Factory  # "module:callable" (imported lazily) or a callable; called with the app
    description: str = ""  # one line for the help screen

    @property
    def pane_id(self) -> str:
        return f"view-{self.id}"

    def build(self, app: App) -> Widget:
        factory = self.factory
        if isinstance(factory, str):
            module, _, name = factory.partition(":")
            factory = getattr(importlib.import_module(module), name)
        return factory(app)


VIEWS: list[ViewSpec] = [
    ViewSpec(
        "dashboard",
        "Dashboard",
        "d",
        "gpudash.tui.screens.dashboard:DashboardView",
        "every device on a line, the host, every GPU process; enter: a device or process in full; I/T/K signal, t tree",
    ),
    ViewSpec(
        "recommend",
        "Recommendations",
        "r",
        "gpudash.tui.screens.recommend_view:RecommendView",
        "training settings with reasons, TOML preview; x exports, R measures",
    ),
    ViewSpec(
        "checks",
        "Checks",
        "c",
        "gpudash.tui.screens.checks_view:ChecksView",
        "health and plugin checks by device and severity, with the action or fix (R runs them)",
    ),
    ViewSpec(
        "plugins", "Plugins", "l", "gpudash.tui.screens.plugins_view:PluginsView", "plugins loaded or failed, and why"
    ),
    ViewSpec(
        "precision",
        "Precision",
        "v",
        "gpudash.tui.screens.precision_view:PrecisionView",
        "spec / torch / verified per precision (R re-runs)",
    ),
    ViewSpec(
        "bench",
        "Benchmarks",
        "b",
        "gpudash.tui.screens.bench_view:BenchView",
        "GFLOPS per precision and size, earlier runs (R runs)",
    ),
    ViewSpec("fleet", "Fleet", "f", "gpudash.tui.screens.fleet_view:FleetView", "many hosts' GPUs: Enter drills down"),
]
