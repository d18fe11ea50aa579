"""What a wheel holds: every package in the tree, the built-in plugins as `gpudash_plugins`, and the data files.

pyproject.toml lists the packages by hand (plugins/ installs under another name, so setuptools cannot find them
by itself); a package missing from that list would work in an editable install and be absent from a wheel.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
# Source folder -> the package name it installs as (pyproject.toml, [tool.setuptools] package-dir).
INSTALLED_AS = {"gpudash": "gpudash", "plugins": "gpudash_plugins"}


def setuptools_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def source_files(folder: str) -> list[Path]:
    """Files of one source folder that belong in a wheel: no caches, no hidden files."""
    return sorted(
        p
        for p in (ROOT / folder).rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not p.name.startswith(".")
        and p.suffix not in (".pyc", ".pyo")
    )


def installed_name(path: Path) -> str:
    """plugins/rocm_checks/hooks.py -> gpudash_plugins/rocm_checks/hooks.py"""
    folder, *rest = path.relative_to(ROOT).parts
    return "/".join([INSTALLED_AS[folder], *rest])


def test_package_dir_maps_the_two_source_folders():
    assert setuptools_config()["package-dir"] == {package: folder for folder, package in INSTALLED_AS.items()}


def test_every_folder_with_python_code_is_a_listed_package():
    in_tree = set()
    for folder in INSTALLED_AS:
        for source in source_files(folder):
            if source.suffix == ".py":
                package = source.parent
                assert (package / "__init__.py").exists(), f"{package.relative_to(ROOT)} has no __init__.py"
                in_tree.add(installed_name(package / "__init__.py").removesuffix("/__init__.py").replace("/", "."))
    listed = set(setuptools_config()["packages"])
    assert sorted(in_tree - listed) == [], "add these to [tool.setuptools] packages in pyproject.toml"
    assert sorted(listed - in_tree) == [], "these packages are listed in pyproject.toml but not in the tree"


def test_a_wheel_holds_every_module_plugin_and_style_sheet(tmp_path):
    # Build from a copy, so the build leaves no build/ or egg-info in the checkout.
    source = tmp_path / "src"
    for folder in INSTALLED_AS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(source)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("gpudash-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())

    expected = {installed_name(p) for folder in INSTALLED_AS for p in source_files(folder)}
    assert sorted(expected - in_wheel) == []
    assert {"gpudash_plugins/rocm_checks/hooks.py", "gpudash/tui/app.tcss", "gpudash/tui/views.tcss"} <= in_wheel
    # The built-ins never install as a top-level `plugins` package a user's folder could shadow.
    assert not any(name.startswith("plugins/") for name in in_wheel)
