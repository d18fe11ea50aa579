"""Each GPU's health for the dashboard, read at a slower cadence than telemetry, never on the UI thread.

A reading is the same action as `gpudash info`'s health (gpudash.actions.info.device_health: the driver-counter
checks, some 60 driver calls per GPU, and the remembered failures), so it runs in a thread worker every
`[health] read_interval_s` (30 s, the cadence `gpudash serve` reads them at), armed only once the last reading
has finished. A replay's recorded counters never change: they are judged once. While polling is paused, no
reading is made. The result lands in `app.health` (device key -> DeviceHealth) and `app.health_applied` tells
the widgets that show it (the device table's mark, the device detail).

The reading takes no app lock: it only iterates the device list (the torch merge replaces the list, never
changes it in place), and the driver child serialises its own requests, so a poll never waits on it here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.signal import Signal
from textual.timer import Timer

if TYPE_CHECKING:
    from gpudash.actions.session import Session

Reader = Callable[["Session", Any], dict[str, Any]]  # (session, machine) -> device key -> DeviceHealth


class HealthHost(Protocol):
    """What the watch uses of the dashboard app (gpudash.tui.app.GpudashApp), named here so that this module, which
    the app imports, does not import the app back."""

    session: Session
    machine: Any
    paused: bool
    health: dict[str, Any]
    health_read: bool
    health_applied: Signal[dict[str, Any]]

    @property
    def run_worker(self) -> Callable[..., Any]: ...

    @property
    def set_timer(self) -> Callable[..., Timer]: ...

    @property
    def from_worker(self) -> Callable[..., None]: ...

    @property
    def notify(self) -> Callable[..., None]: ...


def read_device_health(session: Session, machine: Any) -> dict[str, Any]:
    from gpudash.actions.info import device_health

    return device_health(session, machine)


class HealthWatch:
    def __init__(self, app: HealthHost, interval_s: float, reader: Reader = read_device_health) -> None:
        self.app = app
        self.interval_s = interval_s
        self.reader = reader
        self.readings = 0  # finished readings, failed ones included
        self._timer: Timer | None = None
        self._failure: str | None = None  # the last failure told, so a lasting one is told once

    @property
    def repeats(self) -> bool:
        return not self.app.machine.replayed

    def start(self) -> None:
        self._due()

    def _due(self) -> None:
        self._timer = None
        if self.app.paused:
            self._arm()
            return
        self.app.run_worker(
            self._read, thread=True, group="health", exit_on_error=False, description="read each GPU's health"
        )

    def _arm(self) -> None:
        if self.repeats and self._timer is None:
            self._timer = self.app.set_timer(self.interval_s, self._due, name="health reading")

    def _read(self) -> None:
        try:
            found: dict[str, Any] | None = self.reader(self.app.session, self.app.machine)
            failure = None
        except Exception as exc:  # shown, never fatal: the marks keep the last verdict
            found, failure = None, f"health reading failed: {exc}"
        self.app.from_worker(self._apply, found, failure)

    def _apply(self, found: dict[str, Any] | None, failure: str | None) -> None:
        self.readings += 1
        if failure is not None:
            if failure != self._failure:
                self.app.notify(failure, severity="error")
            self._failure = failure
        else:
            self._failure = None
            self.app.health = found or {}
            self.app.health_read = True
            self.app.health_applied.publish(self.app.health)
        self._arm()
