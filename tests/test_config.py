"""Config: documented defaults, search order, and one-line errors for bad files."""

import sys
from pathlib import Path

import pytest

from gpudash.config import defaults, load_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib
from gpudash.errors import UsageError

REPO = Path(__file__).resolve().parent.parent


def test_documented_config_equals_builtin_defaults():
    documented = tomllib.loads((REPO / "config.toml").read_text())
    assert documented == defaults()


def test_no_file_means_defaults():
    assert load_config(None) == defaults()


def test_values_override(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[ui]\nrefresh_interval = 2\n")
    config = load_config(str(cfg))
    assert config["ui"]["refresh_interval"] == 2.0
    assert config["ui"]["history_seconds"] == defaults()["ui"]["history_seconds"]


def test_user_config_location_is_used(tmp_path, monkeypatch):
    user = tmp_path / "xdg" / "gpudash" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[snapshot]\nseconds = 1.5\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_config(None)["snapshot"]["seconds"] == 1.5


def test_explicit_path_wins_over_user_config(tmp_path, monkeypatch):
    user = tmp_path / "xdg" / "gpudash" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[snapshot]\nseconds = 1.5\n")
    explicit = tmp_path / "mine.toml"
    explicit.write_text("[snapshot]\nseconds = 9.0\n")
    assert load_config(str(explicit))["snapshot"]["seconds"] == 9.0


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[ui]\nrefresh_interval = -1\n", "ui.refresh_interval: expected a value from 0.1 to 60, got -1 (line 2)"),
        ("[ui]\n\nrefresh_interval = 'fast'\n", "ui.refresh_interval: expected a number, got str 'fast' (line 3)"),
        ("[export]\nbench = 'maybe'\n", "export.bench: expected one of none, quick, full, got 'maybe' (line 2)"),
        ("plugin_dirs = [1]\n", "plugin_dirs: expected a list of strings (line 1)"),
        (
            "plugin_dirs = ['plugins', '']\n",
            'plugin_dirs: an empty folder name is not a folder (write "." for the working directory) (line 1)',
        ),
        ("[model]\nfactory = 'not a factory'\n", "model.factory: expected 'module:function' or ''"),
        ("[ui]\nrefresh_interval = true\n", "ui.refresh_interval: expected a number, got bool True"),
        ("ui = 3\n", "[ui] must be a table"),
    ],
)
def test_bad_values_name_file_key_and_line(tmp_path, text, expected):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(UsageError) as err:
        load_config(str(cfg))
    assert str(err.value).startswith(str(cfg))
    assert expected in str(err.value)
    assert err.value.exit_code == 2


def test_malformed_toml_names_the_line(tmp_path):
    cfg = tmp_path / "broken.toml"
    cfg.write_text("[ui]\nrefresh_interval = \n")
    with pytest.raises(UsageError, match=r"broken.toml: not valid TOML: .*line 2"):
        load_config(str(cfg))


def test_missing_explicit_file(tmp_path):
    with pytest.raises(UsageError, match="config file not found"):
        load_config(str(tmp_path / "nope.toml"))


def test_unknown_keys_warn_but_load(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("colour = 'red'\n[ui]\nrefresh = 2\n[unknown]\nx = 1\n")
    warnings = []
    config = load_config(str(cfg), warn=warnings.append)
    assert config == defaults()
    assert any("unknown key 'colour'" in w for w in warnings)
    assert any("unknown key 'ui.refresh'" in w for w in warnings)
    assert any("unknown key 'unknown'" in w for w in warnings)
