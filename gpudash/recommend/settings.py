"""Settings: what the recommender decided, every value with its reason and where it came from.

A `Setting` is one exported value. `Settings` groups them by section ("amp", "amp.hf_trainer", "batch",
...) and turns them into the export tree: the values, plus a `reasons` and a `provenance` table keyed by
the dotted name ("amp.dtype"). TOML has no null, so a value that could not be decided is left out of the
tree and its reason says why.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpudash.models import ESTIMATED, MEASURED, REPLAYED, SPEC

PROVENANCES = (MEASURED, SPEC, REPLAYED, ESTIMATED)
EXPORT_VERSION = 1

# Section order in the export (export.schema.json).
SECTION_ORDER = ("amp", "amp.hf_trainer", "fp8", "batch", "dataloader", "env", "routing")


@dataclass(frozen=True)
class Setting:
    value: Any  # str, bool, int or float; None = not decided (left out of the export, reason says why)
    reason: str
    provenance: str

    def __post_init__(self) -> None:
        if self.provenance not in PROVENANCES:
            raise ValueError(f"provenance must be one of {PROVENANCES}, got {self.provenance!r}")


@dataclass
class Settings:
    header: dict[str, Any]  # the [gpudash] table: version, generated, device, replayed, ...
    sections: dict[str, dict[str, Setting]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # things worth saying that are not a setting

    def add(self, section: str, name: str, setting: Setting) -> None:
        self.sections.setdefault(section, {})[name] = setting

    def get(self, dotted: str) -> Setting:
        section, _, name = dotted.rpartition(".")
        try:
            return self.sections[section][name]
        except KeyError:
            raise KeyError(dotted) from None

    def value(self, dotted: str, default: Any = None) -> Any:
        try:
            return self.get(dotted).value
        except KeyError:
            return default

    def items(self) -> Iterator[tuple[str, Setting]]:
        """(dotted name, setting) in export order."""
        for section in _ordered_sections(self.sections):
            for name, setting in self.sections[section].items():
                yield f"{section}.{name}", setting

    def to_tree(self) -> dict[str, Any]:
        """The export tree (gpudash/contracts/export.schema.json): TOML and JSON both render exactly this."""
        tree: dict[str, Any] = {"gpudash": {k: v for k, v in self.header.items() if v is not None}}
        reasons: dict[str, str] = {}
        provenance: dict[str, str] = {}
        for section in _ordered_sections(self.sections):
            table = _table(tree, section)
            for name, setting in self.sections[section].items():
                dotted = f"{section}.{name}"
                if setting.value is not None:
                    table[name] = setting.value
                reasons[dotted] = setting.reason
                provenance[dotted] = setting.provenance
        if self.notes:
            tree["gpudash"]["notes"] = list(self.notes)
        tree["reasons"] = reasons
        tree["provenance"] = provenance
        return tree


def _ordered_sections(sections: dict[str, Any]) -> list[str]:
    known = [s for s in SECTION_ORDER if s in sections]
    return known + [s for s in sections if s not in SECTION_ORDER]


def _table(tree: dict[str, Any], dotted: str) -> dict[str, Any]:
    node = tree
    for part in dotted.split("."):
        node = node.setdefault(part, {})
    return node
