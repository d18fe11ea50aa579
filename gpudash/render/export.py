"""The export file's text: TOML with each value's provenance and reason beside it, or plain JSON.

Both faces show this text: `gpudash export` writes it, the TUI's Recommendations view previews it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudash import strict_json
from gpudash.errors import UsageError

if TYPE_CHECKING:
    from gpudash.recommend import Settings

FORMATS = ("toml", "json")


def comments(settings: Settings) -> dict[str, str]:
    return {dotted: f"{s.provenance}: {s.reason}" for dotted, s in settings.items() if s.value is not None}


def render(settings: Settings, fmt: str = "toml") -> str:
    tree = settings.to_tree()
    if fmt == "json":
        return strict_json.dumps(tree, indent=2) + "\n"
    if fmt != "toml":
        raise UsageError(f"--format {fmt}: expected one of {', '.join(FORMATS)}")
    from gpudash.render.toml import render as render_toml

    head = settings.header
    where = "replayed: values are spec, not verified" if head.get("replayed") else "live"
    preamble = [
        f"gpudash export: training settings for {head.get('device')} ({head.get('device_key')}, {where}).",
        "Each value has its provenance and reason beside it; [reasons] and [provenance] repeat them for programs.",
        "Load it with gpudash.apply.load(path); see docs/export.md.",
    ]
    return render_toml(tree, comments(settings), preamble)
