"""What the Pilot tests of every TUI view share: reading the screen and waiting for it."""

from __future__ import annotations

import time


def no_torch(machine) -> None:
    """Stands in for the app's torch step (a replayed machine skips it anyway)."""


def screen_text(app) -> str:
    """What the terminal shows right now, as plain text (the compositor's current lines)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_until(pilot, condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)
