"""Issue 25 item 4, "no text cut in a way that changes its meaning": at 80x24, on the 8-GPU replay and the fake
8-GPU NVML, every figure and reason the dashboard shows is whole (wrapped, or left out with a marker, or
ended at a word where it is shown whole on the same screen), never cut mid-word: "bf16-mixed" was "bf16-mix",
a peak of 66,900 was "6", a reason "not reported by repl…"."""

from __future__ import annotations

import sys
from pathlib import Path

from fakes import load_example, make_fake_pynvml
from tui_helpers import no_torch, open_detail, screen_text, wait_until

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.render.bench import HEADER, precision_rows
from gpudash.render.check_groups import severity_tally
from gpudash.render.column_fit import dropped_marker, fit_columns
from gpudash.render.short_forms import at_word, without_aside
from gpudash.tui.app import create_app
from gpudash.tui.widgets.device_detail import DeviceDetail, field_rows, wrapped_rows
from gpudash.tui.widgets.device_table import DeviceTable
from gpudash.tui.widgets.live_table import LiveTable

DGX_H100 = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "dgx-h100-8gpu.json"
SIZE = (80, 24)


def replay_app():
    return create_app(discover(replay=str(DGX_H100), include_torch=False), defaults(), add_torch_view=no_torch)


def fake_nvml_app(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(load_example("dgx-h100-8gpu.json")["devices"]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    return create_app(discover(include_torch=False), config, add_torch_view=no_torch)


async def dashboard_ready(pilot, app) -> DeviceTable:
    await wait_until(pilot, lambda: app.latest and app.query(DeviceTable) and app.query_one(DeviceTable).row_keys, 30)
    return app.query_one(DeviceTable)


def joined(app) -> str:
    """The screen's words with line ends and runs of spaces as one space: a wrapped sentence reads whole."""
    return " ".join(screen_text(app).split())


# The pure helpers -----------------------------------------------------------------------------------------


def test_short_forms_end_at_a_word_or_drop_the_aside():
    assert without_aside("host load not recorded (replayed: a snapshot keeps the GPUs)") == "host load not recorded"
    assert without_aside("no aside here") == "no aside here"
    assert at_word("8 GPUs present (no count expected)", 26) == "8 GPUs present (no count…"
    assert at_word("8 GPUs present (no count expected)", 20) == "8 GPUs present (no…"
    assert at_word("fits", 10) == "fits"
    assert at_word("averyveryverylongword", 6) == "avery…"  # one word longer than the room: nothing shorter says more


def test_columns_are_dropped_whole_in_the_stated_order():
    header = ["precision", "best", "latency", "peak"]
    rows = [["fp32", "1,234.5", "1.00 (0.9-1.1)", "66,900 spec"]]
    kept, dropped = fit_columns(header, rows, 200, ["latency", "best"])
    assert (kept, dropped) == ([0, 1, 2, 3], [])
    kept, dropped = fit_columns(header, rows, 40, ["latency", "best"], marker=4)
    assert [header[i] for i in kept] == ["precision", "best", "peak"] and dropped == ["latency"]
    kept, dropped = fit_columns(header, rows, 10, ["latency", "best"])
    assert [header[i] for i in kept] == ["precision", "peak"]  # never dropped: the table scrolls instead
    assert dropped_marker(dropped) == "+2›" and dropped_marker([]) == ""


def test_detail_rows_wrap_and_keep_every_character():
    rows = [("UUID", "GPU-04a34fbc-0a77-5ddc-ae88-ca90a327e677", ""), ("fan", "n/a", "not reported by replay/nvml")]
    lines = wrapped_rows(rows, 12, 12)
    uuid = "".join(cells[1].plain.strip() for key, cells in lines if key.startswith("UUID"))
    why = " ".join(cells[2].plain.strip() for key, cells in lines if key.startswith("fan")).strip()
    assert uuid == rows[0][1] and why == rows[1][2]
    assert all(len(cells[1].plain) <= 13 and len(cells[2].plain) <= 13 for _, cells in lines)
    assert len({key for key, _ in lines}) == len(lines)  # continuation lines have keys of their own


# At 80x24 --------------------------------------------------------------------------------------------------


async def test_replay_at_80_columns_shows_every_value_whole():
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await dashboard_ready(pilot, app)
        # The replay's host note: its short form, or (beside the driver facts) left out whole with the marker.
        host = screen_text(app).splitlines()[2]
        assert "host load not recorded (replayed)" in host or ("not recorded" not in host and "+1›" in host)
        assert "load not recor…" not in host  # never cut
        await pilot.press("r")
        await wait_until(pilot, lambda: "bf16-mixed" in screen_text(app), 30)  # was "bf16-mix"
        assert "bf16-mix " not in screen_text(app)
        await pilot.press("b")
        view = app.query_one("#bench")
        await wait_until(pilot, lambda: view.current is not None and "+" in screen_text(app), 30)
        dev = view._shown_entry(view.current)
        peaks = {row[0]: row[HEADER_PEAK] for row in precision_rows(dev)[0]}
        text = screen_text(app)
        for precision, peak in peaks.items():  # each figure whole on its row ("66,900 spec" was "6")
            line = next(line for line in text.splitlines() if line.strip().startswith(precision + " "))
            assert peak in line, (precision, peak, line)
        assert dropped_marker(view._dropped) in text  # what was left out is counted on the table
        assert "latency ms (p10-p90)" in joined(app)  # and named with the highlighted precision's cells
        await pilot.press("c")
        checks = app.query_one("#checks")
        await wait_until(pilot, lambda: not checks.running and checks.lines, 60)
        tally = severity_tally(checks.lines)
        assert "not applicable" in tally
        await wait_until(pilot, lambda: tally in joined(app), 30)  # whole on screen: it read "8 OK, 73 not"
        for line in screen_text(app).splitlines():
            if "…" in line:  # a summary ended on purpose: at a word, whole in the detail below
                assert line.split("…")[0][-1:] not in ("", " ")


async def test_detail_reasons_wrap_instead_of_being_cut(monkeypatch):
    app = fake_nvml_app(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        table = await dashboard_ready(pilot, app)
        await wait_until(pilot, lambda: all(d.key in table.samples for d in table.devices))  # past "…" (waiting)
        table.redraw()
        for key in table.row_keys:
            assert not any(cell.plain.rstrip().endswith("…") for cell in table.cells_of(key)), key
        await open_detail(pilot, app, "nvidia:7")
        detail = app.query_one(DeviceDetail)
        fields = detail.query_one("#detail-fields", LiveTable)
        await wait_until(pilot, lambda: len(fields.row_keys) > 10)
        shown = {}
        for key in fields.row_keys:
            label = key.split("\x00", 1)[0]
            cells = fields.cells_of(key)
            value, why = shown.get(label, ("", ""))
            shown[label] = (value + cells[1].plain.strip(), f"{why} {cells[2].plain.strip()}".strip())
            assert "…" not in cells[1].plain + cells[2].plain
        for label, value, why in field_rows(detail.device, app.latest.get("nvidia:7"), app.machine.runtime):
            assert shown[label][0].replace(" ", "") == value.replace(" ", ""), label
            assert shown[label][1] == why, label


HEADER_PEAK = HEADER.index("peak (provenance)")
