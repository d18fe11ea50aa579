"""The one-pass paths of the readers of a device's answers (issue 25 item 7) accept and return exactly what the
full checks do: field_checks.build's fields taken as they are, and strict_json.loads's documents that need no
cleaning. Each case is read both ways, the quick path turned off for the second."""

from __future__ import annotations

import itertools
import json

import pytest

from gpudash import field_checks, strict_json
from gpudash.devices.contained.backend import _CHOICES
from gpudash.field_checks import FieldProblem, build
from gpudash.models import DeviceInfo, Sample

VALUES = [
    None,
    True,
    False,
    0,
    -1,
    7,
    100,
    101,
    -274,
    2**63 - 1,
    2**63,
    -(2**63),
    0.5,
    -0.5,
    99.9,
    100.5,
    1e30,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    "P0",
    "x\x1b[31m",
    [],
    [1],
    {},
    {"a": "b"},
    {"a": 1},
    {"a": None},
]


def outcome(cls: type, data: dict, ranges: bool):
    try:
        return ("ok", repr(build(cls, data, "sample", choices=_CHOICES, ranges=ranges)))
    except (FieldProblem, TypeError) as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("cls", [Sample, DeviceInfo])
@pytest.mark.parametrize("ranges", [False, True])
def test_build_takes_and_refuses_what_the_full_checks_do(monkeypatch, cls, ranges):
    names = [f[0] for f in field_checks._fields(cls)]
    base = {"name": "GPU", "vendor": "nvidia", "index": 0} if cls is DeviceInfo else {}
    cases = [{**base, name: value} for name, value in itertools.product(names, VALUES)]
    quick = [outcome(cls, case, ranges) for case in cases]
    monkeypatch.setattr(field_checks, "_taken_as_is", lambda quick, value, name: False)
    full = [outcome(cls, case, ranges) for case in cases]
    assert quick == full
    assert any(o[0] == "ok" for o in full) and any(o[0] != "ok" for o in full)


def test_build_copies_an_object_of_strings():
    data = {"unavailable": {"power_w": "NotSupported"}}
    sample = build(Sample, data, "sample")
    assert sample.unavailable == data["unavailable"] and sample.unavailable is not data["unavailable"]


DOCUMENTS = [
    '{"ok": {"power_w": 275.0, "name": "NVIDIA H100", "processes": [{"pid": 1, "unavailable": {}}]}}',
    '{"ok": 9223372036854775807}',
    '{"ok": 9223372036854775808}',
    '{"ok": 1e400}',
    '{"ok": -1e400}',
    '{"ok": NaN, "b": Infinity}',
    '{"name": "a\\u001b[31mred"}',
    '{"name": "tab\\there"}',
    '{"name": "caf\\u00e9", "x": "\\ud800"}',
    '{"name": "bidi \u202e"}',
    '{"name": "del \x7f"}',
    '{"name": "raw \x1b"}',
    '{"a": 1,}',
    "[" * 64 + "]" * 64,
    "[" * 65 + "]" * 65,
    '{"k": "' + "[" * 70 + '"}',
    "[" + ",".join("[]" for _ in range(70)) + "]",
    '{"long": "' + "x" * (strict_json.MAX_STRING + 5) + '"}',
    '{"short": "' + "x" * (strict_json.MAX_STRING - 20) + '"}',
]


def parsed(text: str, lines: bool):
    try:
        return ("ok", json.dumps(strict_json.loads(text, lines=lines), allow_nan=True))
    except strict_json.JsonProblem as exc:
        return ("problem", str(exc))


@pytest.mark.parametrize("lines", [False, True])
def test_loads_returns_and_refuses_what_the_full_checks_do(monkeypatch, lines):
    quick = [parsed(text, lines) for text in DOCUMENTS]
    assert sum(strict_json._plain(text) for text in DOCUMENTS) >= 5  # the quick path is taken
    monkeypatch.setattr(strict_json, "_plain", lambda text: False)
    full = [parsed(text, lines) for text in DOCUMENTS]
    assert quick == full
    assert quick[-2][1].endswith('\\u2026"}')  # the long string is cut, not passed whole


def test_a_plain_document_nested_too_deep_is_refused():
    with pytest.raises(strict_json.JsonProblem, match="nested more than 64"):
        strict_json.loads("[" * 65 + "]" * 65)
    assert strict_json.loads("[" * 64 + "]" * 64) is not None


@pytest.mark.parametrize(
    "value",
    [
        {"ok": {"power_w": 275.0, "processes": [{"pid": 1, "name": "python"}], "t": (1, 2)}},
        {"a": float("nan"), "b": [float("inf"), -float("inf")], "c": 1.5},
        {"name": "lone \ud800 surrogate", "key \udfff": 1},
        {"hangul": "\ud7a3", "e": "caf\u00e9"},
        {"when": object()},
        [1, "x", None, True],
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_dumps_writes_what_the_full_path_writes(value, indent):
    full = json.dumps(strict_json.printable(value), indent=indent, allow_nan=False, default=lambda o: "obj")
    assert strict_json.dumps(value, indent=indent, default=lambda o: "obj") == full
    json.loads(full)  # strict JSON every parser reads
