"""docs/api.md stays honest: every Python example runs as written, and prints exactly the output shown below it."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "api.md"
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)


def examples() -> list[tuple[str, str | None]]:
    """(code, the output shown after it or None) for each ```python block of the document."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(DOC.read_text())]
    text = DOC.read_text()
    out = []
    for i, (lang, body, _start, end) in enumerate(blocks):
        if lang != "python":
            continue
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        shown = nxt[1] if nxt and nxt[0] == "text" and not text[end : nxt[2]].strip() else None
        out.append((body, shown))
    return out


@pytest.mark.parametrize("code, shown", examples(), ids=lambda v: None)
def test_example_runs_and_prints_what_the_doc_shows(code, shown, monkeypatch):
    if "import lightning" in code and importlib.util.find_spec("lightning") is None:
        pytest.skip("lightning is not installed (it is not a gpudash dependency)")
    monkeypatch.chdir(REPO)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    if shown is not None:
        assert printed.getvalue() == shown
