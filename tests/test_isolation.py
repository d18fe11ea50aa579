"""Nothing in the working directory runs unless named: not a json.py, a plugins/ package, a *.dist-info with a
gpudash entry point, or the .py files of a plugin folder given as ""."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GPUDASH = str(Path(sys.executable).parent / "gpudash")  # the console script of this environment


def marker_code(name: str) -> str:
    """Module source that leaves a file named MARK-<name> next to itself when imported."""
    return (
        "import os\n"
        f"open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'MARK-{name}'), 'a').write('imported\\n')\n"
    )


@pytest.fixture
def hostile_cwd(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "json.py").write_text(marker_code("json") + "raise SystemExit('hostile json imported')\n")
    (cwd / "plugins").mkdir()
    (cwd / "plugins" / "__init__.py").write_text(marker_code("plugins-package"))
    (cwd / "evil_plugin.py").write_text(
        marker_code("evil-entry-point") + "from gpudash.plugins_api import Check, hookimpl\n\n"
        "class Evil(Check):\n    name = 'evil'\n    needs_device = False\n"
        "    def run(self, device):\n        return self.passed('evil ran')\n\n"
        "@hookimpl\ndef register_checks(register):\n    register(Evil())\n"
    )
    info = cwd / "evil-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gpudash]\nevil = evil_plugin\n")
    return cwd


def run(args, cwd, tmp_path, **env_extra):
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_LOAD_PLUGINS"}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config"), **env_extra)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def markers(cwd: Path) -> list[str]:
    return sorted(p.name for p in cwd.rglob("MARK-*"))


def test_python_m_gpudash_lists_the_same_plugins_as_the_script_and_nothing_from_the_cwd(hostile_cwd, tmp_path):
    module = run([sys.executable, "-m", "gpudash", "plugins", "--json"], hostile_cwd, tmp_path)
    script = run([GPUDASH, "plugins", "--json"], hostile_cwd, tmp_path)
    assert module.returncode == 0 and script.returncode == 0, module.stderr + script.stderr
    names = [p["name"] for p in json.loads(module.stdout)["plugins"]]
    assert names == [p["name"] for p in json.loads(script.stdout)["plugins"]]
    assert "evil" not in names and {"adaptive_kernels", "rocm_checks"} <= set(names)
    assert markers(hostile_cwd) == []


def test_check_and_probe_import_nothing_from_the_cwd(hostile_cwd, tmp_path):
    check = run([GPUDASH, "check", "--json"], hostile_cwd, tmp_path)
    assert check.returncode == 0, check.stderr
    assert "evil" not in {c["plugin"] for c in json.loads(check.stdout)["checks"]}
    probe = run([GPUDASH, "probe", "--precision", "fp32", "--json"], hostile_cwd, tmp_path)
    assert probe.returncode == 0, probe.stderr
    assert json.loads(probe.stdout)  # the child ran the probe with the real json module
    assert markers(hostile_cwd) == []


def test_an_empty_plugin_dir_is_a_usage_error_not_the_working_directory(hostile_cwd, tmp_path):
    (hostile_cwd / "loose_plugin.py").write_text(marker_code("loose-plugin"))
    res = run([GPUDASH, "--plugins-dir", "", "plugins"], hostile_cwd, tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "gpudash: error: plugin directory '': an empty name is not a folder (write '.' for the working directory)"
    ]
    config = tmp_path / "config.toml"
    config.write_text('plugin_dirs = [""]\n')
    res = run([GPUDASH, "--config", str(config), "check"], hostile_cwd, tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"gpudash: error: {config}: plugin_dirs: an empty folder name is not a folder "
        '(write "." for the working directory) (line 1)'
    ]
    assert markers(hostile_cwd) == []
