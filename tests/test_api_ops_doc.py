"""Every ```python block of docs/api-ops.md runs as written, from the repository root, on this CPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpudash.ops
import gpudash.ops.system
import gpudash.runtime.optimizer
import gpudash.runtime.target

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "api-ops.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.DOTALL | re.MULTILINE)


def heading_before(block: str) -> str:
    text = DOC.read_text()
    head = text[: text.index(block)]
    return re.findall(r"^#+ (.+)$", head, flags=re.MULTILINE)[-1]


def test_every_name_in_the_table_has_an_example():
    table = DOC.read_text().split("\n## ")[0]
    names = {
        n
        for row in table.splitlines()
        if row.startswith("| `gpudash.")
        for n in re.findall(r"`(\w+)`", row.split("|")[3])
    }
    code = "\n".join(BLOCKS)
    assert len(names) > 20 and [n for n in sorted(names) if n not in code] == []


@pytest.mark.parametrize("block", BLOCKS, ids=[heading_before(b) for b in BLOCKS])
def test_example_runs(block, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(gpudash.runtime.target, "_machines", {})
    monkeypatch.setattr(gpudash.runtime.target, "_targets", {})
    monkeypatch.setattr(gpudash.runtime.optimizer, "_optimizers", {})
    monkeypatch.setattr(gpudash.ops.system, "_configs", {})
    try:
        exec(compile(block, str(DOC), "exec"), {"__name__": "__doc_example__"})
    finally:
        gpudash.ops.use_plugin_dirs()
    capsys.readouterr()
