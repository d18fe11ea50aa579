"""The dashboard's stylesheets beyond app.tcss, each read the first time what it styles is built.

Textual parses every stylesheet it is given before the first frame; app.tcss keeps only the first screen's rules
(2.3 ms of parsing on a 2-core VM where the whole file took 8.1). The others are added to the app's
stylesheet as app CSS, exactly as if they were in app.tcss, before the widgets they style are mounted:

- views.tcss: the six views behind the dashboard (GpudashApp.build_view);
- detail.tcss: a device's detail and its card (DeviceDetail._build);
- dialogs.tcss: the help screen and the signal confirmation (their __init__, before Textual styles them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

HERE = Path(__file__).parent
VIEWS_CSS = HERE / "views.tcss"
DETAIL_CSS = HERE / "detail.tcss"
DIALOGS_CSS = HERE / "dialogs.tcss"


def ensure(app: App[Any], sheet: Path) -> None:
    """`sheet` is part of the app's CSS from now on (once; later calls do nothing)."""
    source = str(sheet)
    if not app.stylesheet.has_source(source):
        app.stylesheet.add_source(sheet.read_text(encoding="utf-8"), read_from=(source, ""))
