"""gpudash's own actions in the command palette (ctrl+p): the views, pause, help, every view's actions
(export, measure, benchmark, probe, checks, plugins), process sorting, filtering and signals, and the detail
of each device. Each entry names its key, so the palette also teaches the keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from gpudash.render import monitor
from gpudash.render import processes as proc_text

if TYPE_CHECKING:
    from gpudash.actions.session import Session
    from gpudash.devices import Machine
    from gpudash.tui.views import ViewSpec


class GpudashApp(Protocol):
    """What the palette uses of the app (a protocol, so this module never imports the app that imports it)."""

    session: Session
    machine: Machine
    views: list[ViewSpec]

    def action_help(self) -> None: ...
    def action_toggle_pause(self) -> None: ...
    def action_show_view(self, view_id: str) -> None: ...
    async def run_view_action(self, view_id: str, action: str) -> None: ...


Command = tuple[str, Callable[[], Any], str]  # (what the palette shows, what it runs, help line)

# (view id, view action, title, help)
VIEW_ACTIONS = (
    ("recommend", "export", "Export the recommended settings", "Recommendations · x · writes the file named there"),
    (
        "recommend",
        "measure",
        "Measure, then recommend again",
        "Recommendations · R · probes, a quick benchmark, checks",
    ),
    ("bench", "run('quick')", "Run the quick benchmark", "Benchmarks · R"),
    ("bench", "run('full')", "Run the full benchmark", "Benchmarks · F · the long sweep"),
    ("bench", "cancel", "Cancel the running benchmark", "Benchmarks · escape"),
    ("precision", "run_probe", "Re-run the precision probe", "Precision · R · every precision on every device"),
    ("checks", "run_checks", "Run the checks again", "Checks · R"),
    ("plugins", "reload", "Reload the plugins", "Plugins · R"),
    ("dashboard", "filter", "Filter the processes", "Dashboard · / · words in pid, user, GPU, type or command"),
    ("dashboard", "reverse_sort", "Reverse the process order", "Dashboard · S"),
    ("dashboard", "toggle_detail", "Detail of the highlighted device, or back", "Dashboard · enter or D"),
)


def commands(app: GpudashApp) -> list[Command]:
    out: list[Command] = []

    def in_view(view_id: str, action: str) -> Callable[[], Awaitable[None]]:
        return partial(app.run_view_action, view_id, action)

    for view in app.views:
        out.append((f"Show {view.title}", partial(app.action_show_view, view.id), f"{view.key} · {view.description}"))
    out.append(("Pause or resume live polling", app.action_toggle_pause, "p"))
    out.append(("Help: every key", app.action_help, "?"))
    for view_id, action, title, help_text in VIEW_ACTIONS:
        out.append((title, in_view(view_id, action), help_text))
    for sort in proc_text.SORT_KEYS:
        header = proc_text.COLUMN_BY_ID[sort.id].header
        out.append(
            (f"Sort processes by {header}", in_view("dashboard", f"sort_by('{sort.id}')"), "Dashboard · s steps")
        )
    from gpudash.actions.processes import refusal

    off = refusal(app.session)
    signals = (
        ("SIGINT", "I", "interrupts it"),
        ("SIGTERM", "T", "asks it to exit"),
        ("SIGKILL", "K", "ends it at once"),
    )
    for name, key, what in signals:
        help_text = f"Dashboard · {key} · {what}, after a confirmation" + (f" · off: {off}" if off else "")
        out.append((f"Send {name} to the highlighted process", in_view("dashboard", f"signal('{name}')"), help_text))
    labels = monitor.device_labels(app.machine.devices)
    for device in app.machine.devices:
        kind = "CPU" if device.vendor == "cpu" else "GPU"
        out.append(
            (
                f"Details of {kind} {labels[device.key]} ({monitor.short_name(device.name)})",
                in_view("dashboard", f"open_detail('{device.key}')"),
                "Dashboard · enter on its row · card, charts, every field",
            )
        )
    return out


class GpudashCommands(Provider):
    async def discover(self) -> Hits:
        for name, callback, help_text in commands(cast("GpudashApp", self.app)):
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in commands(cast("GpudashApp", self.app)):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, text=name, help=help_text)
