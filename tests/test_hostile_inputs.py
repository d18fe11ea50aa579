"""Smaller hostile inputs: a device name with NUL and ESC in an export, empty and non-finite option values, and
the strict JSON reader and writer themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import H100, snapshot_dict

from gpudash import strict_json
from gpudash.actions.export import export_settings, write_export
from gpudash.actions.session import Session
from gpudash.apply import load
from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import Machine
from gpudash.models import DeviceInfo, Host, Runtime

EXAMPLE = str(Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "h100-80gb.json")
HOSTILE_NAME = "NVIDIA H100\x00\x1b[2J\x1b]0;owned\x07"


def test_an_export_from_a_replay_with_a_hostile_device_name_loads(tmp_path, capsys):
    snapshot = tmp_path / "hostile.json"
    snapshot.write_text(json.dumps(snapshot_dict(dict(H100, name=HOSTILE_NAME))))
    out = tmp_path / "gpudash.toml"
    assert main(["--replay", str(snapshot), "export", "--bench", "none", "-o", str(out)]) == 0
    text = out.read_text()
    assert "\x00" not in text and "\x1b" not in text and "\x07" not in text
    settings = load(out)  # tomllib refuses any control character in a comment: this would raise
    assert settings.tree["gpudash"]["device"] == "NVIDIA H100\\x00\\x1b[2J\\x1b]0;owned\\x07"
    assert "\x1b" not in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_an_export_for_a_live_device_with_control_characters_loads(tmp_path, fmt):
    """A driver could report such a name too: the comments carry escapes, the values survive as data."""
    cpu = DeviceInfo(vendor="cpu", index=0, name=HOSTILE_NAME, logical_cores=2, sources=["cpu"])
    session = Session(defaults(), machine=Machine(host=Host(hostname="box"), runtime=Runtime(), devices=[cpu]))
    gathered = export_settings(session, bench="none")
    path = tmp_path / f"gpudash.{fmt}"
    write_export(gathered.settings, str(path), fmt)
    assert "\x00" not in path.read_text() and "\x1b" not in path.read_text()
    assert load(path).tree["gpudash"]["device"].startswith("NVIDIA H100")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["snapshot", "-o", "-", "--interval", "1e-6"], "--interval: expected seconds from 0.05 to 60, got 1e-06"),
        (["snapshot", "-o", "-", "--seconds", "nan"], "--seconds: expected a finite number, got nan"),
        (["probe", "--timeout", "inf"], "--timeout: expected a finite number, got inf"),
        (["bench", "--preset", ""], "--preset: expected a value, got an empty one"),
        (["bench", "--save", ""], "--save: expected a value, got an empty one"),
        (["bench", "--save", "-"], "--save -: the profile is a file of its own; name a file, not stdout"),
        (["export", "--device", ""], "--device: expected a value, got an empty one"),
        (["probe", "--device", " "], "--device: expected a value, got an empty one"),
        (["--replay", "", "info"], "--replay: expected a value, got an empty one"),
        (["info", "--config", ""], "--config: expected a value, got an empty one"),
    ],
)
def test_empty_and_non_finite_option_values_are_refused(argv, message, capsys):
    assert main(["--replay", EXAMPLE, *argv] if argv[0] != "--replay" else argv) == 2
    assert capsys.readouterr().err == f"gpudash: error: {message}\n"


def test_an_argument_with_an_escape_sequence_is_echoed_safely(capsys):
    assert main(["--replay", EXAMPLE, "probe", "--precision", "\x1b[2J"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2J" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "text, problem",
    [
        ("1e400", "number 1e400 is out of range"),
        ("1" + "0" * 400, "is out of range (at most 9223372036854775807)"),
        ("[" * 5000 + "]" * 5000, "nested more than 64 levels deep"),
        ("[" * 65 + "]" * 65, "nested more than 64 levels deep"),
        ('{"a": ', "not valid JSON: Expecting value (line 1, column 7)"),
    ],
)
def test_strict_json_refuses(text, problem):
    with pytest.raises(strict_json.JsonProblem, match=problem.replace("(", r"\(").replace(")", r"\)")):
        strict_json.loads(text)


def test_non_finite_literals_read_as_unknown():
    """What Python's json wrote for a figure that was not a number (older gpudash files) reads as null."""
    assert strict_json.loads('{"power_w": NaN, "x": [Infinity, -Infinity]}') == {"power_w": None, "x": [None, None]}


def test_strict_json_cleans_strings_and_writes_only_strict_json():
    assert strict_json.loads('{"n\\u0000": "\\ud800\\u001b[31m\\u202e"}') == {"n\\x00": "\\ud800\\x1b[31m\\u202e"}
    assert strict_json.loads('"a\\nb"') == "a\nb" and strict_json.loads('"a\\nb"', lines=False) == "a\\x0ab"
    text = strict_json.dumps({"x": float("nan"), "y": [float("inf")], "z": "\udc80"}, indent=None)
    assert json.loads(text, parse_constant=pytest.fail) == {"x": None, "y": [None], "z": "\\udc80"}
    text.encode("utf-8")
