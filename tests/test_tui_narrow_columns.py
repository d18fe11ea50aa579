"""Issue 25 item 4, "at narrow widths, columns are dropped in a documented order with a marker, and a key shows
them": the dashboard's device table leaves whole columns out in DROP_ORDER (docs/cli.md names it) and counts
them in a last column; HEALTH stays at 80 columns; `w` shows every column, the table scrolling sideways."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fakes import load_example, make_fake_pynvml
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_table import DROP_ORDER, WIDE, DeviceTable

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _app(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(load_example("dgx-h100-8gpu.json")["devices"]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    return create_app(discover(include_torch=False), config, add_torch_view=no_torch)


async def _ready(pilot, app) -> DeviceTable:
    table = app.query_one(DeviceTable)
    # Every device's reading in, not only the rows: a row waiting for its first reading shows "…" on purpose.
    await wait_until(
        pilot,
        lambda: app.latest and table.row_keys and table.columns and all(d.key in table.samples for d in table.devices),
        30,
    )
    return table


def _header(table: DeviceTable) -> str:
    return "".join(c.label.plain for c in table.columns)


def test_docs_name_the_drop_order():
    text = " ".join(DOCS.read_text().split())
    assert "in this order: " + ", ".join(DROP_ORDER) + " (" in text
    assert not {"GPU", "NAME", "UTIL", "MEMORY", "HEALTH"} & set(DROP_ORDER)
    assert set(DROP_ORDER) <= {f.header for f in WIDE}


async def test_80_columns_leave_whole_columns_out_in_order_and_keep_health(monkeypatch):
    app = _app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        table = await _ready(pilot, app)
        assert table.dropped == list(DROP_ORDER[: len(table.dropped)]) and table.dropped  # a prefix of the order
        header = _header(table)
        assert "HEALTH" in header.split() and header.rstrip().endswith(f"+{len(table.dropped)}›")
        assert sum(c.width for c in table.columns) <= 80
        for dropped in table.dropped:
            assert f" {dropped} " not in header + " "
        for key in table.row_keys:  # every cell whole: nothing cut with …
            assert not any(cell.plain.rstrip().endswith("…") for cell in table.cells_of(key)), key
        await wait_until(pilot, lambda: re.search(r"\n 0 +H100 80GB HBM3 .* OK +\n", screen_text(app)))

        # w: every column, the table scrolling sideways; the marker goes.
        table.focus()
        await wait_until(pilot, lambda: app.focused is table)
        await pilot.press("w")
        await wait_until(pilot, lambda: not table.dropped and "ENC/DEC" in _header(table))
        assert [c.key for c in table.columns] == [f.key for f in WIDE]
        assert table.virtual_size.width > table.size.width
        await pilot.press("end")  # the table's own keys still work; then sideways to the last columns
        for _ in range(40):
            await pilot.press("right")
        await wait_until(pilot, lambda: table.scroll_x > 0 and "HEALTH" in screen_text(app).split("\n")[4])
        await pilot.press("w")
        await wait_until(pilot, lambda: table.dropped and table.scroll_x == 0)
        assert _header(table).rstrip().endswith("›")


async def test_wide_terminal_leaves_nothing_out(monkeypatch):
    app = _app(monkeypatch)
    async with app.run_test(size=(160, 40)) as pilot:
        table = await _ready(pilot, app)
        assert table.dropped == [] and "›" not in _header(table)
        assert [c.key for c in table.columns] == [f.key for f in WIDE]


async def test_a_reading_builds_each_row_once_and_fits_the_same_columns(monkeypatch):
    """The columns that fit are worked out from the reading's own rows (their bars counted at their smallest),
    not from every row built a second time with the smallest bars."""
    app = _app(monkeypatch)
    async with app.run_test(size=(140, 45)) as pilot:
        table = await _ready(pilot, app)
        table.redraw()  # the bars' widths for this layout are known from here on
        columns, dropped = [(c.key, c.width) for c in table.columns], list(table.dropped)
        built = []
        cells = DeviceTable._device_cells
        monkeypatch.setattr(
            DeviceTable,
            "_device_cells",
            lambda self, device, *args: built.append(device.key) or cells(self, device, *args),
        )
        table.redraw()
        assert sorted(built) == sorted(d.key for d in table.devices)
        assert [(c.key, c.width) for c in table.columns] == columns and table.dropped == dropped
