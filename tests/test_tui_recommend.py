"""The Recommendations view on a replayed snapshot: settings with reasons, the TOML preview, and an export
that writes the same file as `gpudash export --bench none`. Nothing is probed or benchmarked here."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from textual.widgets import DataTable, Input, Static
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.tui.app import create_app

SNAPSHOT = Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "mi300x.json"
SIZE = (160, 48)


async def test_recommendations_view_shows_reasons_and_exports_the_cli_file(tmp_path, capsys):
    app = create_app(discover(replay=str(SNAPSHOT), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_until(pilot, lambda: app.query("#rec-table") and app.query_one("#rec-table", DataTable).row_count)
        await pilot.pause(0.1)
        view = app.query_one("#recommend")
        text = screen_text(app)
        assert "Recommendations" in text and "amp.dtype" in text and "bfloat16" in text
        assert "spec facts only" in text and "replayed" in text
        preview = str(app.query_one("#rec-preview", Static).render())
        assert 'dtype = "bfloat16"' in preview and 'torch_dtype = "float8_e4m3fnuz"' in preview
        assert "amp.dtype [spec]" in str(app.query_one("#rec-reason", Static).render())

        table = app.query_one("#rec-table", DataTable)
        table.focus()
        await pilot.press("down")  # the reason follows the highlighted row
        await pilot.pause(0.05)
        assert "amp.loss_scaling [spec]" in str(app.query_one("#rec-reason", Static).render())

        out = tmp_path / "from-tui.toml"
        app.query_one("#rec-path", Input).value = str(out)
        await pilot.click("#rec-export")
        await wait_until(pilot, out.exists)
        assert view.gathered is not None

    cli_out = tmp_path / "from-cli.toml"
    assert main(["--replay", str(SNAPSHOT), "export", "--bench", "none", "-o", str(cli_out)]) == 0
    capsys.readouterr()
    tui_tree, cli_tree = tomllib.loads(out.read_text()), tomllib.loads(cli_out.read_text())
    for tree in (tui_tree, cli_tree):
        tree["gpudash"].pop("generated")
    assert tui_tree == cli_tree


async def test_export_to_a_bad_path_notifies_and_writes_nothing(tmp_path):
    app = create_app(discover(replay=str(SNAPSHOT), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_until(pilot, lambda: app.query("#recommend") and app.query_one("#recommend").gathered)
        app.query_one("#rec-path", Input).value = str(tmp_path / "missing" / "x.toml")
        await pilot.click("#rec-export")
        await pilot.pause(0.1)
        messages = [n.message for n in app._notifications]
        assert any("does not exist" in m for m in messages), messages
    assert not (tmp_path / "missing").exists()
