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


def widget_text(root) -> str:
    """Every Static's text under `root`, scrolled out of view or not (a long help screen, say)."""
    from textual.widgets import Static

    return "\n".join(str(w.render()) for w in root.query(Static))


async def open_detail(pilot, app, key: str) -> None:
    """The dashboard's detail of one device, as a user opens it: its row highlighted, then enter."""
    from gpudash.tui.widgets.device_detail import DeviceDetail
    from gpudash.tui.widgets.device_table import DeviceTable

    table = app.query_one(DeviceTable)
    await wait_until(pilot, lambda: key in table.row_keys)
    table.focus()
    table.move_to_key(key)
    await pilot.pause(0.05)
    await pilot.press("enter")
    detail = app.query_one(DeviceDetail)
    await wait_until(pilot, lambda: detail.card is not None and detail.card.device.key == key and detail.display)
    await pilot.pause(0.1)


async def live_detail(pilot, app, key: str):
    """The detail of `key` opened once the device's first reading is in (DeviceDetail)."""
    from gpudash.tui.widgets.device_detail import DeviceDetail

    await wait_until(pilot, lambda: app.latest.get(key) is not None, 30)
    await open_detail(pilot, app, key)
    return app.query_one(DeviceDetail)


def field_value(detail, field: str) -> str:
    """A detail field's value as shown, "" when the field is absent; a value that wraps onto lines of its own
    under the field (row keys "memory", "memory\\x001", ...) is joined with spaces."""
    table = detail.query_one("#detail-fields")
    return " ".join(table.cells_of(key)[1].plain.strip() for key in table.row_keys if key.split("\x00")[0] == field)
