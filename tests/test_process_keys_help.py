"""The `?` screen lists the process list's keys (the dashboard's bindings t, I, space, and the process table's
enter and left/right, which are not bindings of the view) and the JOB column, the ! idle mark and tagging in its
column notes; README and docs/cli.md name the same keys."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import no_torch, wait_until, widget_text

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.tui.app import create_app
from gpudash.tui.screens.help import HelpScreen

REPO = Path(__file__).resolve().parent.parent
DGX_H100 = REPO / "examples" / "snapshots" / "dgx-h100-8gpu.json"


async def test_help_lists_the_process_keys():
    app = create_app(discover(replay=str(DGX_H100), include_torch=False), defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = widget_text(app.screen)
    for expected in (
        "t\nprocesses as a tree", "I\ninterrupt the process", "space\ntag the process",
        "enter\non a process row: its screen", "← →\nin the process list: scroll long commands sideways",
        "JOB (shown when a process has one)", "A GPU marked ! is allocated but idle", "every tagged one",
    ):  # fmt: skip
        assert expected in text, expected


def test_readme_and_cli_doc_name_the_process_keys():
    readme = " ".join((REPO / "README.md").read_text().split())
    cli = " ".join((REPO / "docs" / "cli.md").read_text().split())
    for words in ("`t` tree", "`I`/`T`/`K`", "`space` tags", "`←`/`→`", "enter on a process", "allocated but idle"):
        assert words in readme, words
    for words in (
        "| `t` |", "| `I` |", "| `space` |", "| `←` `→` |", "| enter |", "`job:` line", "--pid=host",
        "hostPID: true", "allocated_idle", "[idle] after_s",
    ):  # fmt: skip
        assert words in cli, words
